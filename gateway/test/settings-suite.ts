// The gateway with a domain service stand-in that echoes the identity it is sent,
// for the files of settings*.test.ts, and their calls.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, expect } from '@jest/globals';
import { DEFAULT_CASE_PHASES, DEFAULT_DEAL_PHASES, readIdentity, type TeamSettings } from '@lpm/shared/identity';
import {
  allUpstreams,
  call,
  INTERNAL_TOKEN,
  startEchoUpstream,
  startGateway,
  type EchoUpstream,
  type TestGateway,
} from './support.ts';

/**
 * Stands in for the cases and deals services: answers /internal/phases-in-use with
 * `inUse` (or `failWith`, or `answer` as it is), and any other request with the
 * identity it read the way a service does.
 */
export async function startDomainStandIn() {
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

export let standIn: Awaited<ReturnType<typeof startDomainStandIn>>;
export let echo: EchoUpstream;
export let gw: TestGateway;

export const DEFAULTS = {
  timezone: 'America/Sao_Paulo',
  case_phases: [...DEFAULT_CASE_PHASES],
  deal_phases: DEFAULT_DEAL_PHASES.map((p) => ({ ...p })),
  court_calendar: { jurisdiction: { uf: null, branch: 'state' }, closures: [] },
  cnj_check: 'warn',
};
/** The defaults as GET /v1/settings answers them: with the portal's and the publication settings, which the services' header leaves out. */
export const ANSWERED = {
  ...DEFAULTS,
  portal: { allowed_origins: [] },
  publications: { watches: [], deadline: { mode: 'suggest', days: 15, counting: 'business' }, backfill_days: 7 },
};
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const put = (key: string, body: unknown, base = gw.url) =>
  call(base, '/v1/settings', { method: 'PUT', key, body: JSON.stringify(body) });
export const getSettings = (key: string) => call(gw.url, '/v1/settings', { key });
/** The settings a service reads from the next proxied request. */
export async function settingsSeenByServices(key: string, path = '/v1/cases'): Promise<TeamSettings> {
  const res = await call(gw.url, path, { key });
  expect(res.status).toBe(200);
  return res.body.data.identity.settings;
}

/** Starts the stand-in, an echo upstream and the gateway (its data apart under `file`) before the file's tests, and stops them after. */
export function settingsSuite(file: string): void {
  beforeAll(async () => {
    standIn = await startDomainStandIn();
    echo = await startEchoUpstream('others');
    gw = await startGateway(file, { ...allUpstreams(echo.url), cases: standIn.url, deals: standIn.url });
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
}
