// Through the whole system: a team's DJEN watch set at the gateway, a poll started by
// POST /v1/publications/sync reading the stand-in of the Comunica API, the
// publications matched to the team's cases (one at once, one by a case created
// later), create mode's deadline activities, and the publications on the timeline.
import type { IssuedTeam, RunningSystem } from '@lpm/test-kit/running-system';
import { systemAndCompanionsForSuite } from '@lpm/test-kit/system-and-companions';
import { day } from '@lpm/test-kit/teams';
import { waitFor } from '@lpm/test-kit/wait';
import { DjenStandIn } from '../services/publications/test/djen-stand-in.ts';

let sys: RunningSystem;
let djen: DjenStandIn;
let t: IssuedTeam;

const call = (method: string, path: string, body?: unknown) => sys.call(t.api_key, method, path, body);

/** A CNJ number with its check digits (mod 97). */
function cnj(sequence: number): string {
  const [n, year, justice, court, origin] = [String(sequence).padStart(7, '0'), '2025', '8', '26', '0100'];
  const dd = String(98 - Number((BigInt(`${n}${year}${justice}${court}${origin}`) * 100n) % 97n)).padStart(2, '0');
  return `${n}-${dd}.${year}.${justice}.${court}.${origin}`;
}

systemAndCompanionsForSuite('publications', {
  async start() {
    djen = new DjenStandIn();
    await djen.start();
    return { DJEN_URL: djen.url, DJEN_USER_AGENT: 'lpm-publications/test (ops@example.com)' };
  },
  ready(started) {
    sys = started;
    t = sys.team('Souza Advogados');
  },
  close: async () => djen?.stop(),
});

type Publication = { id: string; djen_id: number; case_id: string | null; activity_id: string | null };

test('when a watch is set and a sync polls, then publications are matched to cases, now and later, with one deadline activity each and on the timelines', async () => {
  const first = await call('POST', '/v1/cases', { title: 'Souza v. Lima', number: cnj(1) });
  expect(first.status).toBe(201);
  const settings = await call('PUT', '/v1/settings', {
    publications: {
      watches: [{ oab_number: '777', oab_uf: 'SP' }],
      deadline: { mode: 'create', days: 5 },
      backfill_days: 2,
    },
  });
  expect(settings.status).toBe(200);
  djen.add(
    { id: 70001, day: day(-1), lawyers: [{ number: '777', uf: 'SP' }], number: cnj(1), masked: true },
    { id: 70002, day: day(-1), lawyers: [{ number: '777', uf: 'SP' }], number: cnj(2) },
  );
  const sync = await call('POST', '/v1/publications/sync');
  expect([sync.status, sync.body.data]).toEqual([202, { started: true }]);
  const list = async () => (await call('GET', '/v1/publications?limit=10')).body.data as unknown as Publication[];
  await waitFor('both publications kept', async () => (await list()).length === 2, 30_000);
  expect(djen.asked.every((a) => a.userAgent === 'lpm-publications/test (ops@example.com)')).toBe(true);

  const second = await call('POST', '/v1/cases', { title: 'Souza v. Prado', number: cnj(2) });
  const byDjen = async (id: number) => (await list()).find((p) => p.djen_id === id)!;
  // The first case may reach the service's view before or after the poll: either way it ends matched.
  await waitFor(
    'both matched with their activities',
    async () => {
      const [a, b] = [await byDjen(70001), await byDjen(70002)];
      return (
        a.case_id === first.body.data.id &&
        b.case_id === second.body.data.id &&
        a.activity_id !== null &&
        b.activity_id !== null
      );
    },
    30_000,
  );
  const activity = await call('GET', `/v1/activities/${(await byDjen(70002)).activity_id}`);
  expect(activity.body.data).toMatchObject({ type: 'deadline', case: { id: second.body.data.id } });
  for (const c of [first, second]) {
    await waitFor(
      'the publication on the timeline',
      async () => {
        const timeline = (await call('GET', `/v1/cases/${c.body.data.id}/timeline`)).body.data as unknown as {
          type: string;
        }[];
        return timeline.some((e) => e.type === 'publication_received');
      },
      30_000,
    );
  }
  const activities = await call('GET', `/v1/activities?case_id=${second.body.data.id}`);
  expect((activities.body.data as unknown as unknown[]).length).toBe(1);
}, 120_000);
