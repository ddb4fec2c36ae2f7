// After the writes and the faults: wait for quiet, count the events the receiver
// got against those the acknowledged writes owe, and check through the API that the
// state agrees with the acknowledged writes.
import type { ReceivedRequest } from '@lpm/test-kit/https-receiver';
import type { JsonAnswer } from '@lpm/test-kit/json';
import { MongoClient } from 'mongodb';
import type { DrillTeam, Story } from './workload.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface EventCount {
  delivered: number;
  duplicated: number;
  lost: string[];
}

/** Deliveries to the receiver by `type objectId`, and copies of one event id beyond the first. */
export function countEvents(requests: ReceivedRequest[], expected: Set<string>): EventCount {
  const seen = new Set<string>();
  const keys = new Set<string>();
  let duplicated = 0;
  for (const r of requests) {
    const body = JSON.parse(r.body) as { id: string; type: string; data?: { object?: { id?: string } } };
    if (seen.has(body.id)) duplicated++;
    seen.add(body.id);
    keys.add(`${body.type} ${body.data?.object?.id}`);
  }
  const lost = [...expected].filter((e) => !keys.has(e));
  return { delivered: [...expected].length - lost.length, duplicated, lost };
}

export interface EventDelay {
  ms: number;
  /** `type objectId`; null when no event arrived. */
  event: string | null;
  /** The event's id, as its first delivery carried it. */
  eventId: string | null;
  answeredAt: number | null;
}

/** The longest time from the answer of a write to the first delivery of an event it owes, and that event. */
export function maxEventDelayMs(requests: ReceivedRequest[], answeredAt: Map<string, number>): EventDelay {
  const first = new Map<string, { at: number; id: string }>();
  for (const r of requests) {
    const body = JSON.parse(r.body) as { id: string; type: string; data?: { object?: { id?: string } } };
    const key = `${body.type} ${body.data?.object?.id}`;
    if (!first.has(key)) first.set(key, { at: r.at, id: body.id });
  }
  let max: EventDelay = { ms: 0, event: null, eventId: null, answeredAt: null };
  for (const [key, answered] of answeredAt) {
    const delivered = first.get(key);
    if (delivered && delivered.at - answered > max.ms)
      max = { ms: delivered.at - answered, event: key, eventId: delivered.id, answeredAt: answered };
  }
  return max;
}

/**
 * When the webhooks service took the event in (its delivery's `created_at`, in the
 * `deliveries` of database `<dbPrefix>webhooks`): it tells the wait before the
 * webhooks service (the relay, the broker) from the wait inside it. Null when not found.
 */
export async function fannedOutAt(storeUrl: string, dbPrefix: string, eventId: string): Promise<number | null> {
  const client = new MongoClient(storeUrl, { serverSelectionTimeoutMS: 5000 });
  try {
    const delivery = await client
      .db(`${dbPrefix}webhooks`)
      .collection<{ _id: string; event_id: string; created_at: Date }>('deliveries')
      .findOne({ event_id: eventId }, { sort: { created_at: 1 }, projection: { created_at: 1 } });
    return delivery ? delivery.created_at.getTime() : null;
  } catch {
    return null;
  } finally {
    await client.close();
  }
}

/** Waits until every expected event arrived, or nothing arrived for `quietMs`, or `maxMs` passed. */
export async function waitForQuiet(
  requests: ReceivedRequest[],
  expected: Set<string>,
  quietMs: number,
  maxMs: number,
): Promise<void> {
  const deadline = Date.now() + maxMs;
  let count = -1;
  let since = Date.now();
  while (Date.now() < deadline) {
    if (countEvents(requests, expected).lost.length === 0) return;
    if (requests.length !== count) {
      count = requests.length;
      since = Date.now();
    } else if (Date.now() - since > quietMs) {
      return;
    }
    await sleep(1000);
  }
}

type Get = (team: DrillTeam, path: string) => Promise<JsonAnswer>;

/** Each disagreement between the state and the acknowledged writes, as a sentence. */
export async function stateDisagreements(gatewayUrl: string, teams: DrillTeam[], stories: Story[]): Promise<string[]> {
  const get: Get = async (team, path) => {
    for (let attempt = 1; ; attempt++) {
      const res = await fetch(`${gatewayUrl}${path}`, { headers: { authorization: `Bearer ${team.apiKey}` } });
      if (res.ok) return res.json();
      if (attempt >= 10 || (res.status < 500 && res.status !== 429))
        throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
      await sleep(1000 * attempt);
    }
  };
  const problems: string[] = [];
  const expect = (what: string, got: unknown, want: unknown) => {
    if (JSON.stringify(got) !== JSON.stringify(want))
      problems.push(`${what}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  };
  for (const team of teams) {
    const mine = stories.filter((s) => s.team === team.id);
    // Counts hold only where every story of the team is known to the end.
    if (mine.every((s) => !s.uncertain)) {
      const total = async (path: string) =>
        (await get(team, `${path}${path.includes('?') ? '&' : '?'}limit=1`)).pagination.total as number;
      expect(`team ${team.id}: clients`, await total('/v1/clients'), mine.length);
      expect(`team ${team.id}: cases`, await total('/v1/cases'), mine.length * 2);
      expect(`team ${team.id}: deals`, await total('/v1/deals'), mine.length);
      expect(
        `team ${team.id}: activities (a completed task, its next occurrence)`,
        await total('/v1/activities'),
        mine.length * 2,
      );
      expect(`team ${team.id}: financial records`, await total('/v1/financial'), mine.length);
      const deals = (await get(team, '/v1/deals/summary')).data;
      expect(`team ${team.id}: deals won`, deals.by_status?.ganho, {
        count: mine.length,
        value: mine.reduce((a, s) => a + s.dealValue, 0),
      });
      const year = new Date().getUTCFullYear();
      const fin = (await get(team, `/v1/financial/summary?from=${year - 1}-01-01&to=${year + 1}-12-31`)).data;
      expect(
        `team ${team.id}: revenue paid`,
        fin.totals?.revenue,
        mine.reduce((a, s) => a + s.amount, 0),
      );
    }
  }
  for (const s of stories.filter((x) => !x.uncertain)) {
    const team = teams.find((t) => t.id === s.team)!;
    const kase = (await get(team, `/v1/cases/${s.caseId}`)).data;
    const page = await get(team, `/v1/cases/${s.caseId}/activities?limit=100`);
    const listed = page.pagination.total;
    // The count the cases service keeps from activity events, against the activities the activities service lists.
    expect(`case ${s.caseId}: activities_count (expected: its activities listed)`, kase.activities_count, listed);
    // What the case holds, when it is not the story's two: which record is missing or extra.
    const held =
      listed === 2
        ? ''
        : ` (${page.data.map((a: { id: string; type: string; status: string; due_date: string | null }) => `${a.id} ${a.type} ${a.status} ${a.due_date}`).join('; ')})`;
    expect(`case ${s.caseId}: activities listed${held}`, listed, 2);
    const client = (await get(team, `/v1/clients/${s.clientId}`)).data;
    expect(`client ${s.clientId}: cases_count`, client.cases_count, 2);
    const series = (await get(team, `/v1/activities?case_id=${s.caseId}&limit=100`)).data.filter(
      (a: { title: string }) => a.title === s.recurringTitle,
    );
    expect(
      `case ${s.caseId}: the recurring task's occurrences by status`,
      series.map((a: { status: string }) => a.status).sort(),
      ['completed', 'pending'],
    );
  }
  return problems;
}
