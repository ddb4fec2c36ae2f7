// /v1/settings: phases still in use refused, who may read and change the settings,
// and its documentation (the settings themselves: settings.test.ts).
import { describe, expect, test } from '@jest/globals';
import { DEFAULT_CASE_PHASES } from '@lpm/shared/identity';
import { freePort } from '../../scripts/local-store.ts';
import { expectError } from '@lpm/test-kit/api';
import { allUpstreams, call, newTeam, startGateway } from './support.ts';
import { ANSWERED, DEFAULTS, echo, getSettings, gw, put, settingsSuite, standIn } from './settings-suite.ts';

settingsSuite('settingsaccess');

describe('phases in use', () => {
  test('when a case phase in use is removed, then 422 Phase in use with those phases, and nothing changes', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    standIn.state.inUse = ['triagem', 'not-asked-about'];
    const res = await put(team.apiKey, { timezone: 'UTC', case_phases: ['em-andamento', 'em-revisão', 'finalizado'] });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      success: false,
      error: {
        code: 'VALIDATION_ERROR',
        message: 'Phase in use',
        details: { reason: 'phase_in_use', field: 'case_phases', phases: ['triagem'] },
      },
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
    const partial = await startGateway(
      'settings',
      { ...allUpstreams(echo.url), cases: `http://127.0.0.1:${deadPort}`, deals: standIn.url },
      { deployed: ['clients', 'deals'] },
    );
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
      expect(res.body).toEqual({
        success: false,
        error: { code: 'SERVICE_UNAVAILABLE', message: 'The cases service is unavailable', details: {} },
      });
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
    expect(res.body.error).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: 'The deals service is unavailable',
      details: {},
    });
  });

  test('when the owning service answers without an in_use list, then 503 SERVICE_UNAVAILABLE and nothing changes', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    for (const answer of [
      { success: true, data: {} },
      { success: true, data: { in_use: 'lead' } },
      { success: true },
    ]) {
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
    const forbidden = {
      success: false,
      error: { code: 'FORBIDDEN', message: 'Insufficient permissions', details: {} },
    };
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
    expect(settings.put.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/UpdateSettingsRequest',
    });
    expect(schemas.UpdateSettingsRequest.properties).toHaveProperty('deal_phases');
    expect(settings.get.responses['200'].content['application/json'].schema.properties.data).toEqual({
      $ref: '#/components/schemas/Settings',
    });
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
