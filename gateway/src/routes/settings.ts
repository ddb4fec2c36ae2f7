// GET and PUT /v1/settings (decisions §8, admin scope), served by the gateway,
// which owns teams. Services learn the settings from the header the proxy sets on
// every request; after a change this gateway drops the team's cached principals so
// its very next request carries them. Other gateway replicas follow within their
// principal cache's TTL (at most 1 s).
import type { FastifyInstance } from 'fastify';
import { ok } from '@lpm/shared/http/envelope';
import type { SchemaTypes } from '@lpm/shared/http/schemas';
import { SETTINGS_EXAMPLES, settingsResponse, updateSettingsBody } from '../contract/settings-schemas.ts';
import type { PrincipalCache } from '../auth/principal-cache.ts';
import { identityOf } from '../domain/accounts.ts';
import type { Settings } from '../domain/settings.ts';

export interface SettingsRouteOptions {
  settings: Settings;
  principals: PrincipalCache;
}

export function settingsRoutes(fastify: FastifyInstance, opts: SettingsRouteOptions): void {
  const app = fastify.withTypeProvider<SchemaTypes>();
  const config = { adminOnly: true };

  app.get('/v1/settings', { config, schema: { response: settingsResponse } }, async (req) =>
    ok(await opts.settings.get(req.principal!.team.id)),
  );

  app.put(
    '/v1/settings',
    { config, schema: { body: { ...updateSettingsBody, examples: SETTINGS_EXAMPLES }, response: settingsResponse } },
    async (req) => {
      const settings = await opts.settings.update(identityOf(req.principal!), req.body);
      opts.principals.forgetTeam(req.principal!.team.id);
      return ok(settings);
    },
  );
}
