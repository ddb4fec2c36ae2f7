// The gateway's users for services (UserDirectory):
//   GET /internal/users?ids=a,b: the users of a team among ids;
//   GET /internal/team-owner: the team's owner (whom alerts are mailed to);
//   GET /internal/publication-watches: every team that watches lawyers on the DJEN,
//   with its settings and its owner (whom the publications service acts for).
// Only callers with the internal credential and a team id see them; to anyone else
// they do not exist (404 Route not found, before any validation), and each such
// attempt counts as a failed authentication of its address, as a bad API key does
// (429 past AUTH_FAILURE_LIMIT). No API key, no rate limit, not in the public
// OpenAPI document.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ok } from '@lpm/shared/http/envelope';
import { invalidField, notFound } from '@lpm/shared/errors';
import { HEADER, sameSecret } from '@lpm/shared/identity';
import { object, okResponse, out, shape, text, type SchemaTypes } from '@lpm/shared/http/schemas';
import { settingsOf, type Accounts, type User } from '../domain/accounts.ts';
import type { AuthFailures } from '../limits/auth-failures.ts';
import { tooManyFailures } from './access.ts';
import { authFailures } from '../metrics.ts';

const MAX_IDS = 100;

const query = object({ ids: text(4000) }, ['ids']);
const userShape = shape({ id: out.string, name: out.string, email: out.string });

const header = (req: FastifyRequest, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

const directoryUser = ({ id, name, email }: User) => ({ id, name, email });

export interface InternalUsersOptions {
  accounts: Accounts;
  internalToken: string;
  failures: AuthFailures;
  clientAddress(req: FastifyRequest): string;
}

export function internalUsersRoute(fastify: FastifyInstance, opts: InternalUsersOptions): void {
  const app = fastify.withTypeProvider<SchemaTypes>();
  const internalOnly = async (req: FastifyRequest, reply: FastifyReply) => {
    const token = header(req, HEADER.internalToken);
    if (token && sameSecret(token, opts.internalToken) && header(req, HEADER.teamId)) return;
    const charge = await opts.failures.charge(opts.clientAddress(req));
    if (!charge.allowed) throw tooManyFailures(reply, charge);
    authFailures.inc({ reason: 'internal_token' });
    throw notFound('Route not found');
  };

  app.get(
    '/internal/users',
    {
      config: { public: true },
      schema: { querystring: query, response: okResponse(200, { type: 'array', items: userShape }) },
      onRequest: internalOnly,
    },
    async (req) => {
      const ids = [
        ...new Set(
          req.query.ids
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        ),
      ];
      if (ids.length > MAX_IDS) throw invalidField('ids', `ids must have at most ${MAX_IDS} items`);
      const users = ids.length ? await opts.accounts.findUsers(header(req, HEADER.teamId)!, ids) : [];
      return ok(users.map(directoryUser));
    },
  );

  app.get(
    '/internal/team-owner',
    { config: { public: true }, schema: { response: okResponse(200, userShape) }, onRequest: internalOnly },
    async (req) => {
      const team = await opts.accounts.getTeam(header(req, HEADER.teamId)!);
      const [owner] = await opts.accounts.findUsers(team.id, [team.owner_user_id]);
      if (!owner) throw notFound('Team owner not found');
      return ok(directoryUser(owner));
    },
  );

  app.get('/internal/publication-watches', { config: { public: true }, onRequest: internalOnly }, async () => {
    const teams = await opts.accounts.watchingTeams();
    return ok(
      teams.map((t) => ({
        team_id: t.id,
        user_id: t.owner_user_id,
        settings: settingsOf(t),
        publications: t.publications,
      })),
    );
  });
}
