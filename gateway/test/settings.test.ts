import Fastify, { type FastifyInstance } from 'fastify';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { DEFAULT_CASE_PHASES, DEFAULT_DEAL_PHASES, HEADER, readIdentity, type TeamSettings } from '@lpm/shared/identity';
import { freePort } from '../../scripts/local-store.ts';
import { expectError } from '@lpm/test-kit/api';
import { allUpstreams, call, INTERNAL_TOKEN, newTeam, startEchoUpstream, startGateway, testDbPrefix, type TestGateway } from './support.ts';

/**
 * Stands in for the cases and deals services: answers /internal/phases-in-use with
 * `inUse` (or `failWith`, or `answer` as it is), and any other request with the
 * identity it read the way a service does.
 */
async function startDomainStandIn() {
  const app: FastifyInstance = Fastify({ logger: false });
  const state = {
    inUse: [] as string[],
    failWith: 0,
    answer: undefined as unknown,
    calls: [] as { headers: Record<string, string | string[] | undefined>; body: unknown }[],
  };
  app.post('/internal/phases-in-use', async (req, reply) => {
    state.calls.push({ headers: req.headers, body: req.body });
    if (state.failWith) return reply.status(state.failWith).send({ success: false });
    if (state.answer !== undefined) return state.answer;
    return { success: true, data: { in_use: state.inUse } };
  });
  app.all('/*', async (req) => ({ success: true, data: { identity: readIdentity(req.headers, INTERNAL_TOKEN) } }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, app, state };
}

let standIn: Awaited<ReturnType<typeof startDomainStandIn>>;
let echo: Awaited<ReturnType<typeof startEchoUpstream>>;
let gw: TestGateway;

beforeAll(async () => {
  standIn = await startDomainStandIn();
  echo = await startEchoUpstream('others');
  gw = await startGateway('settings', { ...allUpstreams(echo.url), cases: standIn.url, deals: standIn.url });
});

afterAll(async () => {
  await gw?.close();
  await standIn?.app.close();
  await echo?.app.close();
});

beforeEach(() => {
  standIn.state.inUse = [];
  standIn.state.failWith = 0;
  standIn.state.answer = undefined;
  standIn.state.calls = [];
});

const DEFAULTS = {
  timezone: 'America/Sao_Paulo',
  case_phases: [...DEFAULT_CASE_PHASES],
  deal_phases: DEFAULT_DEAL_PHASES.map((p) => ({ ...p })),
  court_calendar: { jurisdiction: { uf: null, branch: 'state' }, closures: [] },
  cnj_check: 'warn',
};
/** The settings as GET and PUT answer them: the header's, and the publication settings the header leaves out. */
const ANSWERED = { ...DEFAULTS, publications: { watches: [], deadline: { mode: 'suggest', days: 15, counting: 'business' }, backfill_days: 7 } };
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const put = (key: string, body: unknown, base = gw.url) => call(base, '/v1/settings', { method: 'PUT', key, body: JSON.stringify(body) });
const getSettings = (key: string) => call(gw.url, '/v1/settings', { key });
/** The settings a service reads from the next proxied request. */
async function settingsSeenByServices(key: string, path = '/v1/cases'): Promise<TeamSettings> {
  const res = await call(gw.url, path, { key });
  expect(res.status).toBe(200);
  return res.body.data.identity.settings;
}

describe('GET /v1/settings', () => {
  test('when a team never changed its settings, then it reads the defaults and updated_at null', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    const res = await getSettings(team.apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { ...ANSWERED, updated_at: null } });
  });

  test('when a team was created with a time zone, then its settings have it, by its canonical name', async () => {
    const team = await gw.accounts.createTeam({ name: 'Lisboa', plan: 'enterprise', timezone: 'Europe/Lisbon', ownerName: 'O', ownerEmail: 'o@lisboa.pt' });
    expect((await getSettings(team.apiKey)).body.data.timezone).toBe('Europe/Lisbon');
    const typed = await gw.accounts.createTeam({ name: 'Porto', plan: 'enterprise', timezone: 'eUrOpE/lisbon', ownerName: 'O', ownerEmail: 'o@porto.pt' });
    expect(typed.team.timezone).toBe('Europe/Lisbon');
    expect((await getSettings(typed.apiKey)).body.data.timezone).toBe('Europe/Lisbon');
  });

  test('when services receive a request of a team with default settings, then they read the defaults', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    expect(await settingsSeenByServices(team.apiKey)).toEqual(DEFAULTS);
  });
});

describe('PUT /v1/settings', () => {
  test('when the time zone changes, then the answer is the whole settings and the very next request carries it', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    await settingsSeenByServices(team.apiKey);
    const res = await put(team.apiKey, { timezone: 'Europe/Lisbon' });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toEqual({ ...ANSWERED, timezone: 'Europe/Lisbon', updated_at: expect.stringMatching(ISO_MS) });
    expect(await settingsSeenByServices(team.apiKey)).toEqual({ ...DEFAULTS, timezone: 'Europe/Lisbon' });
    expect((await getSettings(team.apiKey)).body.data).toEqual(res.body.data);
    expect(standIn.state.calls).toHaveLength(0);
  });

  test('when the time zone is sent in another spelling, then it is stored and shown by its canonical name, and services get that name', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    const res = await put(team.apiKey, { timezone: 'aMeRiCa/sao_paulo' });
    expect(res.status).toBe(200);
    expect(res.body.data.timezone).toBe('America/Sao_Paulo');
    expect((await getSettings(team.apiKey)).body.data.timezone).toBe('America/Sao_Paulo');
    expect((await settingsSeenByServices(team.apiKey)).timezone).toBe('America/Sao_Paulo');
    const client = await MongoClient.connect(process.env.MONGO_URL!);
    try {
      const stored = await client.db(`${testDbPrefix('settings')}gateway`).collection<{ _id: string; timezone: string }>('teams').findOne({ _id: team.team.id });
      expect(stored?.timezone).toBe('America/Sao_Paulo');
    } finally {
      await client.close();
    }
  });

  test('when case phases change, then names are trimmed, non-ASCII names arrive intact and removed ones are checked with the cases service', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    await settingsSeenByServices(team.apiKey);
    const phases = [' recebido ', 'triagem', 'em-andamento', 'em-revisão', 'finalizado', 'arquivado ✓'];
    const res = await put(team.apiKey, { case_phases: phases });
    expect(res.status).toBe(200);
    const expected = phases.map((p) => p.trim());
    expect(res.body.data).toMatchObject({ case_phases: expected, deal_phases: DEFAULTS.deal_phases, timezone: DEFAULTS.timezone });
    expect(await settingsSeenByServices(team.apiKey)).toEqual({ ...DEFAULTS, case_phases: expected });
    expect(standIn.state.calls).toHaveLength(0);

    const renamed = await put(team.apiKey, { case_phases: ['recebido', 'análise', 'finalizado'] });
    expect(renamed.status).toBe(200);
    expect(standIn.state.calls).toHaveLength(1);
    const [callMade] = standIn.state.calls;
    expect(callMade.body).toEqual({ kind: 'case', phases: ['triagem', 'em-andamento', 'em-revisão', 'arquivado ✓'] });
    expect(callMade.headers[HEADER.internalToken]).toBe(INTERNAL_TOKEN);
    expect(callMade.headers[HEADER.teamId]).toBe(team.team.id);
    expect(callMade.headers[HEADER.userId]).toBe(team.user.id);
    expect((await settingsSeenByServices(team.apiKey)).case_phases).toEqual(['recebido', 'análise', 'finalizado']);
  });

  test('when deal phases change, then removed ones are checked with the deals service and the next request carries them', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    const deal_phases = [
      { name: 'lead', probability: 5 },
      { name: 'proposta', probability: 50 },
      { name: 'fechamento', probability: 100 },
      { name: 'reunião', probability: 0 },
    ];
    const res = await put(team.apiKey, { deal_phases });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ ...ANSWERED, deal_phases, updated_at: expect.stringMatching(ISO_MS) });
    expect(standIn.state.calls.map((c) => c.body)).toEqual([{ kind: 'deal', phases: ['qualificado', 'negociacao'] }]);
    expect(await settingsSeenByServices(team.apiKey, '/v1/deals')).toEqual({ ...DEFAULTS, deal_phases });
  });

  test('when several fields change at once, then all are applied', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    const change = { timezone: 'UTC', case_phases: [...DEFAULT_CASE_PHASES, 'x'], deal_phases: [...DEFAULTS.deal_phases, { name: 'y', probability: 99 }] };
    const res = await put(team.apiKey, change);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ ...ANSWERED, ...change, updated_at: expect.stringMatching(ISO_MS) });
    expect(await settingsSeenByServices(team.apiKey)).toEqual({ ...DEFAULTS, ...change });
  });

  test('when another key of the team was cached before the change, then its next request carries the new settings too', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    const reader = await gw.accounts.createKey({ teamId: team.team.id, userId: team.user.id, scopes: ['read'] });
    const other = await newTeam(gw.accounts, 'enterprise');
    await settingsSeenByServices(reader.apiKey);
    await settingsSeenByServices(other.apiKey);
    expect((await put(team.apiKey, { timezone: 'Asia/Tokyo' })).status).toBe(200);
    expect((await settingsSeenByServices(reader.apiKey)).timezone).toBe('Asia/Tokyo');
    expect((await settingsSeenByServices(other.apiKey)).timezone).toBe('America/Sao_Paulo');
  });
});

describe('PUT /v1/settings validation', () => {
  let team: Awaited<ReturnType<typeof newTeam>>;
  beforeAll(async () => {
    team = await newTeam(gw.accounts, 'enterprise');
  });

  const error = (message: string, details: Record<string, unknown> = {}) => ({ success: false, error: { code: 'VALIDATION_ERROR', message, details } });
  const invalid = (field: string, message: string, extra: Record<string, unknown> = {}) => error(message, { field, type: 'invalid', ...extra });
  const manyPhases = (n: number, name = (i: number) => `phase ${i}`) => Array.from({ length: n }, (_, i) => name(i));

  const cases: [string, unknown, unknown][] = [
    ['an empty body', {}, error('No fields to update')],
    ['an unknown field', { color: 'blue' }, error('Unknown field: color', { field: 'color', type: 'unknown' })],
    ['a read-only field', { updated_at: '2026-01-01T00:00:00.000Z' }, error('Unknown field: updated_at', { field: 'updated_at', type: 'unknown' })],
    ['an unknown time zone', { timezone: 'Mars/Olympus' }, invalid('timezone', 'Invalid time zone')],
    ['a UTC offset for a time zone', { timezone: '+03:00' }, invalid('timezone', 'Invalid time zone')],
    ['a time zone that is not a string', { timezone: 3 }, invalid('timezone', 'Invalid time zone')],
    ['no case phases', { case_phases: [] }, invalid('case_phases', 'case_phases must be a list of 1 to 30 phases')],
    ['31 case phases', { case_phases: manyPhases(31) }, invalid('case_phases', 'case_phases must be a list of 1 to 30 phases')],
    ['case phases that are not a list', { case_phases: 'recebido' }, invalid('case_phases', 'case_phases must be a list of 1 to 30 phases')],
    ['an empty case phase', { case_phases: ['recebido', ''] }, invalid('case_phases.1', 'case_phases.1 must not be empty')],
    ['a blank case phase', { case_phases: ['   '] }, invalid('case_phases.0', 'case_phases.0 must not be empty')],
    ['a case phase of 101 characters', { case_phases: ['a'.repeat(101)] }, invalid('case_phases.0', 'case_phases.0 must be at most 100 characters')],
    ['a case phase that is not a string', { case_phases: [7] }, invalid('case_phases.0', 'case_phases.0 must be a string', { expected: 'string' })],
    ['a repeated case phase', { case_phases: ['a', 'b', 'a'] }, invalid('case_phases', 'Duplicate phase', { phase: 'a' })],
    ['a case phase repeated with spaces', { case_phases: ['a', ' a '] }, invalid('case_phases', 'Duplicate phase', { phase: 'a' })],
    ['no deal phases', { deal_phases: [] }, invalid('deal_phases', 'deal_phases must be a list of 1 to 30 phases')],
    ['31 deal phases', { deal_phases: manyPhases(31).map((name) => ({ name, probability: 1 })) }, invalid('deal_phases', 'deal_phases must be a list of 1 to 30 phases')],
    ['a deal phase without probability', { deal_phases: [{ name: 'lead' }] }, error('deal_phases.0.probability is required', { field: 'deal_phases.0.probability', type: 'required' })],
    ['a deal phase without name', { deal_phases: [{ probability: 1 }] }, error('deal_phases.0.name is required', { field: 'deal_phases.0.name', type: 'required' })],
    ['a deal phase with an unknown field', { deal_phases: [{ name: 'lead', probability: 1, color: 'red' }] }, error('Unknown field: deal_phases.0.color', { field: 'deal_phases.0.color', type: 'unknown' })],
    ['a deal phase that is not an object', { deal_phases: ['lead'] }, invalid('deal_phases.0', 'deal_phases.0 must be an object', { expected: 'object' })],
    ['an empty deal phase name', { deal_phases: [{ name: ' ', probability: 1 }] }, invalid('deal_phases.0.name', 'deal_phases.0.name must not be empty')],
    ['a deal phase name of 101 characters', { deal_phases: [{ name: 'b'.repeat(101), probability: 1 }] }, invalid('deal_phases.0.name', 'deal_phases.0.name must be at most 100 characters')],
    ['a probability over 100', { deal_phases: [{ name: 'lead', probability: 101 }] }, invalid('deal_phases.0.probability', 'Invalid probability')],
    ['a negative probability', { deal_phases: [{ name: 'lead', probability: -1 }] }, invalid('deal_phases.0.probability', 'Invalid probability')],
    ['a fractional probability', { deal_phases: [{ name: 'lead', probability: 12.5 }] }, invalid('deal_phases.0.probability', 'Invalid probability')],
    ['a probability sent as a string', { deal_phases: [{ name: 'lead', probability: '10' }] }, invalid('deal_phases.0.probability', 'Invalid probability')],
    [
      'a repeated deal phase',
      { deal_phases: [{ name: 'lead', probability: 1 }, { name: 'lead', probability: 2 }] },
      invalid('deal_phases', 'Duplicate phase', { phase: 'lead' }),
    ],
    [
      'settings too large to travel in a header',
      { case_phases: manyPhases(30, (i) => `${i}`.padEnd(100, '€')) },
      error('Settings must be at most 8192 bytes as JSON', { type: 'invalid', max_bytes: 8192 }),
    ],
  ];

  test.each(cases)('when the body has %s, then 400 with the exact error', async (_label, body, expected) => {
    const res = await put(team.apiKey, body);
    expect([res.status, res.body]).toEqual([400, expected]);
  });

  test('when the longest ASCII phases are sent, then they fit', async () => {
    const fresh = await newTeam(gw.accounts, 'enterprise');
    const body = {
      timezone: 'America/Argentina/ComodRivadavia',
      case_phases: manyPhases(30, (i) => `${i}`.padEnd(100, 'c')),
      deal_phases: manyPhases(30, (i) => `${i}`.padEnd(100, 'd')).map((name) => ({ name, probability: 100 })),
    };
    expect((await put(fresh.apiKey, body)).status).toBe(200);
    // An alias is stored by the name Intl gives it.
    expect(await settingsSeenByServices(fresh.apiKey)).toEqual({ ...DEFAULTS, ...body, timezone: 'America/Catamarca' });
  });

  test('when a request is refused, then the settings are unchanged', async () => {
    expect((await getSettings(team.apiKey)).body.data).toEqual({ ...ANSWERED, updated_at: null });
    expect(standIn.state.calls).toHaveLength(0);
  });
});

describe('phases in use', () => {
  test('when a case phase in use is removed, then 422 Phase in use with those phases, and nothing changes', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    standIn.state.inUse = ['triagem', 'not-asked-about'];
    const res = await put(team.apiKey, { timezone: 'UTC', case_phases: ['em-andamento', 'em-revisão', 'finalizado'] });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      success: false,
      error: { code: 'VALIDATION_ERROR', message: 'Phase in use', details: { reason: 'phase_in_use', field: 'case_phases', phases: ['triagem'] } },
    });
    expect(standIn.state.calls.map((c) => c.body)).toEqual([{ kind: 'case', phases: ['recebido', 'triagem'] }]);
    expect((await getSettings(team.apiKey)).body.data).toEqual({ ...ANSWERED, updated_at: null });
  });

  test('when a phase in use is renamed, then 422 (renaming removes the old name)', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    standIn.state.inUse = ['lead'];
    const deal_phases = DEFAULTS.deal_phases.map((p) => (p.name === 'lead' ? { name: 'Lead', probability: 10 } : p));
    const res = await put(team.apiKey, { deal_phases });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual({ reason: 'phase_in_use', field: 'deal_phases', phases: ['lead'] });
  });

  test('when only the probability of a phase in use changes, then it is not removed and nothing is asked', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    standIn.state.inUse = ['lead'];
    const deal_phases = DEFAULTS.deal_phases.map((p) => (p.name === 'lead' ? { name: 'lead', probability: 15 } : p));
    expect((await put(team.apiKey, { deal_phases })).status).toBe(200);
    expect(standIn.state.calls).toHaveLength(0);
  });

  test('when the cases service is not deployed, then phases are removed without asking it', async () => {
    const deadPort = await freePort();
    const partial = await startGateway('settings', { ...allUpstreams(echo.url), cases: `http://127.0.0.1:${deadPort}`, deals: standIn.url }, { deployed: ['clients', 'deals'] });
    try {
      const team = await newTeam(partial.accounts, 'enterprise');
      const res = await put(team.apiKey, { case_phases: ['novo'] }, partial.url);
      expect(res.status).toBe(200);
      expect(res.body.data.case_phases).toEqual(['novo']);
      expect(standIn.state.calls).toHaveLength(0);
    } finally {
      await partial.close();
    }
  });

  test('when the cases service is down, then 503 SERVICE_UNAVAILABLE, and a change removing nothing still works', async () => {
    const deadPort = await freePort();
    const down = await startGateway('settings', { ...allUpstreams(echo.url), cases: `http://127.0.0.1:${deadPort}` });
    try {
      const team = await newTeam(down.accounts, 'enterprise');
      const res = await put(team.apiKey, { case_phases: ['novo'] }, down.url);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ success: false, error: { code: 'SERVICE_UNAVAILABLE', message: 'The cases service is unavailable', details: {} } });
      expect((await put(team.apiKey, { case_phases: [...DEFAULT_CASE_PHASES, 'novo'] }, down.url)).status).toBe(200);
    } finally {
      await down.close();
    }
  });

  test('when the owning service answers an error, then 503 SERVICE_UNAVAILABLE', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    standIn.state.failWith = 500;
    const res = await put(team.apiKey, { deal_phases: [{ name: 'único', probability: 50 }] });
    expect(res.status).toBe(503);
    expect(res.body.error).toEqual({ code: 'SERVICE_UNAVAILABLE', message: 'The deals service is unavailable', details: {} });
  });

  test('when the owning service answers without an in_use list, then 503 SERVICE_UNAVAILABLE and nothing changes', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    for (const answer of [{ success: true, data: {} }, { success: true, data: { in_use: 'lead' } }, { success: true }]) {
      standIn.state.answer = answer;
      const res = await put(team.apiKey, { deal_phases: [{ name: 'único', probability: 50 }] });
      expectError(res, 503, 'SERVICE_UNAVAILABLE', 'The deals service is unavailable');
    }
    expect((await getSettings(team.apiKey)).body.data).toEqual({ ...ANSWERED, updated_at: null });
  });
});

describe('access', () => {
  test('when the key has no admin scope, then 403 for GET and PUT', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    const key = await gw.accounts.createKey({ teamId: team.team.id, userId: team.user.id, scopes: ['read', 'write'] });
    const forbidden = { success: false, error: { code: 'FORBIDDEN', message: 'Insufficient permissions', details: {} } };
    for (const res of [await getSettings(key.apiKey), await put(key.apiKey, { timezone: 'UTC' })]) {
      expect([res.status, res.body]).toEqual([403, forbidden]);
    }
    expect((await getSettings(team.apiKey)).body.data.timezone).toBe('America/Sao_Paulo');
  });

  test('when no key is sent, then 401', async () => {
    expect((await call(gw.url, '/v1/settings')).status).toBe(401);
  });

  test('when settings are read and changed, then each request counts toward the rate limit', async () => {
    const team = await newTeam(gw.accounts, 'starter');
    const first = await getSettings(team.apiKey);
    const second = await put(team.apiKey, { timezone: 'UTC' });
    expect(first.headers.get('ratelimit-limit')).toBe('60');
    expect(first.headers.get('ratelimit-remaining')).toBe('59');
    expect(second.headers.get('ratelimit-remaining')).toBe('58');
  });

  test('when the settings routes are requested, then no service is asked to serve them', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    const res = await getSettings(team.apiKey);
    expect(res.body.data.identity).toBeUndefined();
    expect(res.headers.get('x-upstream')).toBeNull();
  });
});

describe('OpenAPI', () => {
  test('when the merged document is read, then it has the settings routes and not the internal ones', async () => {
    const res = await call(gw.url, '/v1/openapi.json');
    expect(res.status).toBe(200);
    const settings = res.body.paths['/v1/settings'];
    const schemas = res.body.components.schemas;
    expect(Object.keys(settings).sort()).toEqual(['get', 'put']);
    expect(settings.put.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/UpdateSettingsRequest' });
    expect(schemas.UpdateSettingsRequest.properties).toHaveProperty('deal_phases');
    expect(settings.get.responses['200'].content['application/json'].schema.properties.data).toEqual({ $ref: '#/components/schemas/Settings' });
    expect(schemas.Settings.properties).toHaveProperty('updated_at');
    expect(settings.put.description).toContain('**Scope:** `admin`.');
    expect(Object.keys(res.body.paths).filter((p) => p.startsWith('/internal'))).toEqual([]);
  });

  test('when a deployed service does not answer, then the document is 503, never served with its routes missing', async () => {
    const deadPort = await freePort();
    const down = await startGateway('settings', { ...allUpstreams(echo.url), cases: `http://127.0.0.1:${deadPort}` });
    try {
      expectError(await call(down.url, '/v1/openapi.json'), 503, 'SERVICE_UNAVAILABLE', 'Service unavailable');
    } finally {
      await down.close();
    }
  });
});
