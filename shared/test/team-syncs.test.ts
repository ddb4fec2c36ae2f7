// TeamSyncs (jobs/team-syncs.ts) on the real store, with a stand-in for a service's
// records: a run goes page by page over the records it has not marked yet, one
// process runs a team at a time, a stopped run resumes with the records left, a
// newer change (a new mark) starts over, and a
// team that keeps failing backs off without holding back another team.
import type { Db } from 'mongodb';
import { defaultTeamSettings, type TeamSettings } from '../src/identity.ts';
import { newId } from '../src/ids.ts';
import {
  TEAM_SYNCS,
  TeamSyncs,
  type SyncWho,
  type TeamSyncWork,
  type TeamSyncsOptions,
} from '../src/jobs/team-syncs.ts';
import { quietLogger, waitFor } from '@lpm/test-kit/wait';
import { scratchDatabase } from '@lpm/test-kit/scratch-database';

let db: Db;
const started: TeamSyncs[] = [];

scratchDatabase('team_syncs', (opened) => (db = opened));

afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

/**
 * A service's records of one kind, in memory: `count` per team, ids in _id order,
 * each with the mark of the last run that rewrote it. Each rewrite is logged (which process, which team, which records, with which
 * zone); `fail` makes a team's rewrites throw, `pageMs` makes each take that long.
 */
function records(count: number) {
  const ids = new Map<string, string[]>();
  const marks = new Map<string, string>();
  const log: { process: string; team: string; ids: string[]; zone: string }[] = [];
  const recounts: { team: string; days: (number | null)[] }[] = [];
  const state = { fail: new Set<string>(), pageMs: 0, failRecount: false, failPartWay: 0 };
  const idsOf = (team: string) => {
    if (!ids.has(team)) ids.set(team, Array.from({ length: count }, () => newId('act')).sort());
    return ids.get(team)!;
  };
  const work = (process: string): TeamSyncWork => ({
    read: async (team, mark, limit) =>
      idsOf(team)
        .filter((id) => marks.get(id) !== Object.values(mark)[0])
        .slice(0, limit)
        .map((_id) => ({ _id })),
    rewrite: async (who: SyncWho, _at, page, mark) => {
      if (state.fail.has(who.teamId)) throw new Error('the store refused');
      // A page that wrote some records, moving them to day 99, before one failed.
      if (state.failPartWay > 0 && state.failPartWay--)
        return { changed: 3, movedDays: [1, 99], failed: new Error('the store refused') };
      await new Promise((r) => setTimeout(r, state.pageMs));
      log.push({ process, team: who.teamId, ids: page.map((r) => r._id), zone: who.settings.timezone });
      for (const r of page) marks.set(r._id, Object.values(mark)[0]);
      // Each page moves its records from day 1 to the day of its first record's position.
      return { changed: page.length, movedDays: [1, idsOf(who.teamId).indexOf(page[0]._id)] };
    },
    recount: async (team, days) => {
      if (state.failRecount) throw new Error('the store refused');
      recounts.push({ team, days: [...days].sort((a, b) => (a ?? 0) - (b ?? 0)) });
    },
    same: (done: TeamSettings, next: TeamSettings) => done.timezone === next.timezone,
  });
  const rewritten = (team: string) => log.filter((l) => l.team === team).flatMap((l) => l.ids);
  return { work, log, recounts, state, idsOf, rewritten };
}

async function startSyncs(work: TeamSyncWork, opts: Partial<TeamSyncsOptions> = {}): Promise<TeamSyncs> {
  const syncs = new TeamSyncs({
    db,
    logger: quietLogger,
    work: { 'time-zone': work },
    pageSize: 10,
    windowSize: 35,
    passMs: 20,
    ...opts,
  });
  await syncs.start();
  started.push(syncs);
  return syncs;
}

const who = (zone = 'Asia/Tokyo'): SyncWho => ({
  teamId: newId('team'),
  userId: newId('user'),
  settings: defaultTeamSettings(zone),
});
const doc = (teamId: string) =>
  db
    .collection<{
      _id: string;
      cursor: string | null;
      pending: number;
      failures: number;
      retry_at: Date | null;
      changed: number;
      moved_days: (number | null)[];
    }>(TEAM_SYNCS)
    .findOne({ _id: `time-zone:${teamId}` });

async function untilDone(syncs: TeamSyncs, w: SyncWho, at: Date, timeoutMs = 20_000) {
  await waitFor('the run done', async () => (await syncs.request('time-zone', w, at)).done, timeoutMs);
}

test('when a run is asked for, then it answers at once and rewrites every record a page at a time, its last record stored after each', async () => {
  const recs = records(100);
  const syncs = await startSyncs(recs.work('p1'));
  const w = who();
  const at = new Date();
  expect(await syncs.request('time-zone', w, at)).toEqual({ done: false, changed: 0 });
  await untilDone(syncs, w, at);
  expect(recs.rewritten(w.teamId)).toEqual(recs.idsOf(w.teamId));
  // Pages of 10 from windows of 35: 10, 10, 10, 5, then the next window.
  expect(recs.log.map((l) => l.ids.length)).toEqual([10, 10, 10, 5, 10, 10, 10, 5, 10, 10, 10]);
  expect(await doc(w.teamId)).toMatchObject({ pending: 0, cursor: recs.idsOf(w.teamId)[99], changed: 100 });
  // Asked again (the gateway learns it is done): nothing runs again.
  expect(await syncs.request('time-zone', w, at)).toEqual({ done: true, changed: 100 });
  expect(recs.log).toHaveLength(11);
});

test('when pages move records between list days, then those days are counted again once, when the run ends, also after a page or that recount failed', async () => {
  const recs = records(30);
  recs.state.failRecount = true;
  recs.state.failPartWay = 1;
  const syncs = await startSyncs(recs.work('p'), { backoffMs: 50 });
  const w = who();
  const at = new Date();
  await syncs.request('time-zone', w, at);
  await waitFor('a failed page, then a failed recount', async () => ((await doc(w.teamId))?.failures ?? 0) >= 2);
  expect(await doc(w.teamId)).toMatchObject({ pending: 1, moved_days: expect.arrayContaining([1, 99, 0, 10, 20]) });
  recs.state.failRecount = false;
  await untilDone(syncs, w, at);
  expect(recs.recounts).toEqual([{ team: w.teamId, days: [0, 1, 10, 20, 99] }]);
  expect(await doc(w.teamId)).toMatchObject({ moved_days: [] });
  // Every record was rewritten once: the failed recount did not run the pages again.
  expect(recs.rewritten(w.teamId)).toEqual(recs.idsOf(w.teamId));
});

test('when two processes are asked for the same team at once, then one runs it and each record is rewritten once', async () => {
  const recs = records(60);
  recs.state.pageMs = 30;
  const [a, b] = await Promise.all([startSyncs(recs.work('a')), startSyncs(recs.work('b'))]);
  const w = who();
  const at = new Date();
  await Promise.all([a.request('time-zone', w, at), b.request('time-zone', w, at)]);
  await untilDone(a, w, at);
  expect(recs.rewritten(w.teamId)).toEqual(recs.idsOf(w.teamId));
  expect(new Set(recs.log.map((l) => l.process)).size).toBe(1);
});

test('when the process running a team stops, then another resumes with the records not marked yet and no record is rewritten twice', async () => {
  const recs = records(80);
  recs.state.pageMs = 40;
  const first = await startSyncs(recs.work('first'));
  const w = who();
  const at = new Date();
  await first.request('time-zone', w, at);
  await waitFor('two pages done', () => recs.log.length >= 2);
  await first.stop();
  const stopped = await doc(w.teamId);
  expect(stopped).toMatchObject({ pending: 1 });
  expect(stopped!.cursor).toBe(recs.log[recs.log.length - 1].ids.at(-1));
  const second = await startSyncs(recs.work('second'));
  await untilDone(second, w, at);
  expect(recs.rewritten(w.teamId)).toEqual(recs.idsOf(w.teamId));
  expect(recs.log.some((l) => l.process === 'second')).toBe(true);
  expect((await doc(w.teamId))!.changed).toBe(80);
});

test('when a newer change comes during a run, then the run starts over on the newer settings, and an older change is not applied', async () => {
  const recs = records(60);
  recs.state.pageMs = 30;
  const syncs = await startSyncs(recs.work('p'));
  const tokyo = who('Asia/Tokyo');
  const manaus: SyncWho = { ...tokyo, settings: defaultTeamSettings('America/Manaus') };
  const earlier = new Date(Date.now() - 1000);
  await syncs.request('time-zone', tokyo, earlier);
  await waitFor('a page done', () => recs.log.length >= 1);
  const later = new Date();
  await syncs.request('time-zone', manaus, later);
  await untilDone(syncs, manaus, later);
  const last = recs.log.filter((l) => l.zone === 'America/Manaus').flatMap((l) => l.ids);
  expect(last).toEqual(recs.idsOf(tokyo.teamId));
  // The older change told again (the gateway asking late): not applied over the newer one.
  expect(await syncs.request('time-zone', tokyo, earlier)).toEqual({ done: true, changed: 60 });
});

test('when a team keeps failing, then it backs off, doubling up to the cap, while another team is done, with one run at a time', async () => {
  const recs = records(20);
  const syncs = await startSyncs(recs.work('p'), { runsAtOnce: 1, backoffMs: 200, backoffCapMs: 800 });
  const failing = who();
  const fine = who();
  recs.state.fail.add(failing.teamId);
  await syncs.request('time-zone', failing, new Date());
  await syncs.request('time-zone', fine, new Date());
  await untilDone(syncs, fine, new Date(0));
  const retries: number[] = [];
  let last = 0;
  await waitFor('four failures', async () => {
    const d = await doc(failing.teamId);
    if (d && d.failures !== last) {
      last = d.failures;
      retries.push(d.retry_at!.getTime());
    }
    return last >= 4;
  });
  const gaps = retries.slice(1).map((t, i) => t - retries[i]);
  // 400, 800, 800 ms apart (and the run's own time): not every pass (20 ms). The cap itself is backoffDelayMs's (shared/test/backoff.test.ts).
  expect(gaps[0]).toBeGreaterThanOrEqual(400);
  expect(gaps[1]).toBeGreaterThanOrEqual(800);
  expect(gaps[2]).toBeGreaterThanOrEqual(800);
  expect(recs.rewritten(failing.teamId)).toEqual([]);
});
