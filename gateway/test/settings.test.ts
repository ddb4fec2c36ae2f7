// GET and PUT /v1/settings through the gateway: defaults, changes the services see,
// and each validation error (phases in use, access, docs: settings-access.test.ts).
import { MongoClient } from 'mongodb';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { DEFAULT_CASE_PHASES, HEADER } from '@lpm/shared/identity';
import { INTERNAL_TOKEN, newTeam, testDbPrefix } from './support.ts';
import {
  ANSWERED,
  DEFAULTS,
  getSettings,
  gw,
  ISO_MS,
  put,
  settingsSeenByServices,
  settingsSuite,
  standIn,
} from './settings-suite.ts';

settingsSuite('settings');

describe('GET /v1/settings', () => {
  test('when a team never changed its settings, then it reads the defaults and updated_at null', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    const res = await getSettings(team.apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { ...ANSWERED, updated_at: null } });
  });

  test('when a team was created with a time zone, then its settings have it, by its canonical name', async () => {
    const team = await gw.accounts.createTeam({
      name: 'Lisboa',
      plan: 'enterprise',
      timezone: 'Europe/Lisbon',
      ownerName: 'O',
      ownerEmail: 'o@lisboa.pt',
    });
    expect((await getSettings(team.apiKey)).body.data.timezone).toBe('Europe/Lisbon');
    const typed = await gw.accounts.createTeam({
      name: 'Porto',
      plan: 'enterprise',
      timezone: 'eUrOpE/lisbon',
      ownerName: 'O',
      ownerEmail: 'o@porto.pt',
    });
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
    expect(res.body.data).toEqual({
      ...ANSWERED,
      timezone: 'Europe/Lisbon',
      updated_at: expect.stringMatching(ISO_MS),
    });
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
      const stored = await client
        .db(`${testDbPrefix('settings')}gateway`)
        .collection<{ _id: string; timezone: string }>('teams')
        .findOne({ _id: team.team.id });
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
    expect(res.body.data).toMatchObject({
      case_phases: expected,
      deal_phases: DEFAULTS.deal_phases,
      timezone: DEFAULTS.timezone,
    });
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
    const change = {
      timezone: 'UTC',
      case_phases: [...DEFAULT_CASE_PHASES, 'x'],
      deal_phases: [...DEFAULTS.deal_phases, { name: 'y', probability: 99 }],
    };
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

  const error = (message: string, details: Record<string, unknown> = {}) => ({
    success: false,
    error: { code: 'VALIDATION_ERROR', message, details },
  });
  const invalid = (field: string, message: string, extra: Record<string, unknown> = {}) =>
    error(message, { field, type: 'invalid', ...extra });
  const manyPhases = (n: number, name = (i: number) => `phase ${i}`) => Array.from({ length: n }, (_, i) => name(i));

  const cases: [string, unknown, unknown][] = [
    ['an empty body', {}, error('No fields to update')],
    ['an unknown field', { color: 'blue' }, error('Unknown field: color', { field: 'color', type: 'unknown' })],
    [
      'a read-only field',
      { updated_at: '2026-01-01T00:00:00.000Z' },
      error('Unknown field: updated_at', { field: 'updated_at', type: 'unknown' }),
    ],
    ['an unknown time zone', { timezone: 'Mars/Olympus' }, invalid('timezone', 'Invalid time zone')],
    ['a UTC offset for a time zone', { timezone: '+03:00' }, invalid('timezone', 'Invalid time zone')],
    ['a time zone that is not a string', { timezone: 3 }, invalid('timezone', 'Invalid time zone')],
    ['no case phases', { case_phases: [] }, invalid('case_phases', 'case_phases must be a list of 1 to 30 phases')],
    [
      '31 case phases',
      { case_phases: manyPhases(31) },
      invalid('case_phases', 'case_phases must be a list of 1 to 30 phases'),
    ],
    [
      'case phases that are not a list',
      { case_phases: 'recebido' },
      invalid('case_phases', 'case_phases must be a list of 1 to 30 phases'),
    ],
    [
      'an empty case phase',
      { case_phases: ['recebido', ''] },
      invalid('case_phases.1', 'case_phases.1 must not be empty'),
    ],
    ['a blank case phase', { case_phases: ['   '] }, invalid('case_phases.0', 'case_phases.0 must not be empty')],
    [
      'a case phase of 101 characters',
      { case_phases: ['a'.repeat(101)] },
      invalid('case_phases.0', 'case_phases.0 must be at most 100 characters'),
    ],
    [
      'a case phase that is not a string',
      { case_phases: [7] },
      invalid('case_phases.0', 'case_phases.0 must be a string', { expected: 'string' }),
    ],
    [
      'a repeated case phase',
      { case_phases: ['a', 'b', 'a'] },
      invalid('case_phases', 'Duplicate phase', { phase: 'a' }),
    ],
    [
      'a case phase repeated with spaces',
      { case_phases: ['a', ' a '] },
      invalid('case_phases', 'Duplicate phase', { phase: 'a' }),
    ],
    ['no deal phases', { deal_phases: [] }, invalid('deal_phases', 'deal_phases must be a list of 1 to 30 phases')],
    [
      '31 deal phases',
      { deal_phases: manyPhases(31).map((name) => ({ name, probability: 1 })) },
      invalid('deal_phases', 'deal_phases must be a list of 1 to 30 phases'),
    ],
    [
      'a deal phase without probability',
      { deal_phases: [{ name: 'lead' }] },
      error('deal_phases.0.probability is required', { field: 'deal_phases.0.probability', type: 'required' }),
    ],
    [
      'a deal phase without name',
      { deal_phases: [{ probability: 1 }] },
      error('deal_phases.0.name is required', { field: 'deal_phases.0.name', type: 'required' }),
    ],
    [
      'a deal phase with an unknown field',
      { deal_phases: [{ name: 'lead', probability: 1, color: 'red' }] },
      error('Unknown field: deal_phases.0.color', { field: 'deal_phases.0.color', type: 'unknown' }),
    ],
    [
      'a deal phase that is not an object',
      { deal_phases: ['lead'] },
      invalid('deal_phases.0', 'deal_phases.0 must be an object', { expected: 'object' }),
    ],
    [
      'an empty deal phase name',
      { deal_phases: [{ name: ' ', probability: 1 }] },
      invalid('deal_phases.0.name', 'deal_phases.0.name must not be empty'),
    ],
    [
      'a deal phase name of 101 characters',
      { deal_phases: [{ name: 'b'.repeat(101), probability: 1 }] },
      invalid('deal_phases.0.name', 'deal_phases.0.name must be at most 100 characters'),
    ],
    [
      'a probability over 100',
      { deal_phases: [{ name: 'lead', probability: 101 }] },
      invalid('deal_phases.0.probability', 'Invalid probability'),
    ],
    [
      'a negative probability',
      { deal_phases: [{ name: 'lead', probability: -1 }] },
      invalid('deal_phases.0.probability', 'Invalid probability'),
    ],
    [
      'a fractional probability',
      { deal_phases: [{ name: 'lead', probability: 12.5 }] },
      invalid('deal_phases.0.probability', 'Invalid probability'),
    ],
    [
      'a probability sent as a string',
      { deal_phases: [{ name: 'lead', probability: '10' }] },
      invalid('deal_phases.0.probability', 'Invalid probability'),
    ],
    [
      'a repeated deal phase',
      {
        deal_phases: [
          { name: 'lead', probability: 1 },
          { name: 'lead', probability: 2 },
        ],
      },
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
