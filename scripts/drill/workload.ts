// The drill's writes: actors, each telling one story after another on fresh records
// of its team, through the gateway as an integrator would. A write that fails for a
// reason the caller is told to retry (a 5xx, 429, no answer) is sent again until it
// is answered; a POST keeps its Idempotency-Key, so a retry never creates twice.
// Every answer is checked for the envelope, and each acknowledged write names the
// event it owes (`type id`), which the verdict looks for at the webhook receiver.
import { randomUUID } from 'node:crypto';
import { DEFAULT_CASE_PHASES, DEFAULT_DEAL_PHASES } from '../../shared/src/identity.ts';
import type { JsonAnswer } from '@lpm/test-kit/json';

export interface DrillTeam {
  id: string;
  apiKey: string;
}

/** One story's records and what the drill knows happened to them. */
export interface Story {
  team: string;
  clientId?: string;
  caseId?: string;
  dealId?: string;
  dealValue: number;
  wonCaseId?: string;
  won: boolean;
  recurringId?: string;
  recurringTitle: string;
  completed: boolean;
  noteId?: string;
  noteDeleted: boolean;
  financialId?: string;
  amount: number;
  paid: boolean;
  /** A write was given up or its effect is not known: the story is left out of the exact checks. */
  uncertain: boolean;
}

export interface WriteTally {
  /** Writes answered 2xx (or found applied by a retry). */
  acknowledged: number;
  /** Writes given up, by the status of their last answer ('network' when none came). */
  refused: Record<string, number>;
  refusedSamples: string[];
  /** Attempts answered with something else than a 2xx, by status: what callers saw during the faults. */
  retried: Record<string, number>;
  /** Answers that were not the JSON envelope ({success, data} or {success:false, error:{code,message}}). */
  outsideEnvelope: number;
  outsideSamples: string[];
  /** `type objectId` of every event an acknowledged write owes. */
  expected: Set<string>;
  /** When (ms since the epoch) the write that owes each expected event was answered. */
  answeredAt: Map<string, number>;
}

export interface WorkloadOptions {
  gatewayUrl: string;
  teams: DrillTeam[];
  /** Writes to make at least (the actors also go on until `keepGoing` says stop). */
  writes: number;
  /** Writes a second, across all actors. */
  rate: number;
  actors: number;
  /** Longest a write is retried before it is given up. */
  giveUpMs: number;
  /** Asked between writes once `writes` are done: true while a fault is still to come. */
  keepGoing: () => boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Answers a caller is told to retry: the server's trouble, a throttle, and (with an Idempotency-Key) a first copy still in progress. */
const RETRIED = (status: number, keyed: boolean) => status >= 500 || status === 429 || (keyed && status === 409);
const FAR_DUE = '2030-06-03';

interface Answer {
  status: number;
  body: { success?: boolean; data?: Record<string, JsonAnswer>; error?: { code?: string; message?: string } } | null;
}

export class Workload {
  readonly tally: WriteTally = {
    acknowledged: 0,
    refused: {},
    refusedSamples: [],
    retried: {},
    outsideEnvelope: 0,
    outsideSamples: [],
    expected: new Set(),
    answeredAt: new Map(),
  };
  readonly stories: Story[] = [];
  private started = 0;
  private nextSlot = 0;
  private stopped = false;
  private readonly opts: WorkloadOptions;

  constructor(opts: WorkloadOptions) {
    this.opts = opts;
  }

  /** Writes made so far (acknowledged or given up). */
  get done(): number {
    return this.tally.acknowledged + Object.values(this.tally.refused).reduce((a, b) => a + b, 0);
  }

  async run(): Promise<void> {
    this.nextSlot = performance.now();
    await Promise.all(
      Array.from({ length: this.opts.actors }, (_, i) => this.actor(this.opts.teams[i % this.opts.teams.length])),
    );
  }

  /** Ends the writes (the system is gone): no story begins, and a write being retried is given up. */
  stop(): void {
    this.stopped = true;
  }

  private more(): boolean {
    return !this.stopped && (this.started < this.opts.writes || this.opts.keepGoing());
  }

  private async actor(team: DrillTeam): Promise<void> {
    while (this.more()) await this.story(team);
  }

  /** Waits for the next slot of the open-loop schedule (`rate` a second across the actors). */
  private async pace(): Promise<void> {
    const slot = this.nextSlot;
    this.nextSlot = Math.max(slot, performance.now()) + 1000 / this.opts.rate;
    const wait = slot - performance.now();
    if (wait > 0) await sleep(wait);
  }

  /**
   * One write until it is answered for good. `owes`: the events its acknowledgement
   * owes. A retry answered 422 (or, for a DELETE, 404) after an attempt that got no
   * definite answer means that attempt took effect (the story only asks for moves
   * that were valid when sent).
   */
  private owe(events: string[]): void {
    const now = Date.now();
    for (const e of events) {
      this.tally.expected.add(e);
      if (!this.tally.answeredAt.has(e)) this.tally.answeredAt.set(e, now);
    }
  }

  private async write(
    team: DrillTeam,
    method: string,
    path: string,
    body: unknown,
    owes: (data: Record<string, JsonAnswer>) => string[],
  ): Promise<Record<string, JsonAnswer> | null> {
    await this.pace();
    this.started++;
    const key = method === 'POST' ? randomUUID() : undefined;
    const giveUpAt = Date.now() + this.opts.giveUpMs;
    let unsure = false;
    for (let delay = 200; ; delay = Math.min(delay * 2, 2000)) {
      const answer = await this.send(team, method, path, body, key);
      if (answer && answer.status < 300) {
        this.tally.acknowledged++;
        this.owe(owes(answer.body?.data ?? {}));
        return answer.body?.data ?? {};
      }
      if (
        answer &&
        unsure &&
        (answer.status === 422 || (answer.status === 404 && method === 'DELETE')) &&
        method !== 'POST'
      ) {
        this.tally.acknowledged++;
        this.owe(owes({}));
        return null;
      }
      const status = answer ? String(answer.status) : 'network';
      if ((answer && !RETRIED(answer.status, key !== undefined)) || Date.now() > giveUpAt || this.stopped) {
        this.tally.refused[status] = (this.tally.refused[status] ?? 0) + 1;
        if (this.tally.refusedSamples.length < 10)
          this.tally.refusedSamples.push(`${method} ${path}: ${status} ${answer?.body?.error?.message ?? ''}`);
        throw new Refused();
      }
      this.tally.retried[status] = (this.tally.retried[status] ?? 0) + 1;
      unsure = true;
      await sleep(delay);
    }
  }

  private async send(
    team: DrillTeam,
    method: string,
    path: string,
    body: unknown,
    key?: string,
  ): Promise<Answer | null> {
    let res: Response;
    try {
      res = await fetch(`${this.opts.gatewayUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${team.apiKey}`,
          'content-type': 'application/json',
          ...(key ? { 'idempotency-key': key } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
    } catch {
      return null;
    }
    const text = await res.text().catch(() => '');
    let parsed: Answer['body'] = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // judged below
    }
    if (!inEnvelope(parsed)) {
      this.tally.outsideEnvelope++;
      if (this.tally.outsideSamples.length < 10)
        this.tally.outsideSamples.push(`${method} ${path} ${res.status}: ${text.slice(0, 200)}`);
    }
    return { status: res.status, body: parsed };
  }

  /** A client with a case and a deal won into a second case, a recurring task completed, a note deleted, a fee paid. */
  private async story(team: DrillTeam): Promise<void> {
    const n = this.stories.length;
    const s: Story = {
      team: team.id,
      dealValue: 1000 + (n % 97) * 10,
      won: false,
      recurringTitle: `Revisar contrato ${n}`,
      completed: false,
      noteDeleted: false,
      amount: 100 + (n % 13) * 5,
      paid: false,
      uncertain: false,
    };
    this.stories.push(s);
    const w: StoryWrite = (method, path, body, owes) => this.write(team, method, path, body, owes);
    try {
      await this.clientCaseAndDeal(s, n, w);
      await this.activitiesAndFee(s, n, w);
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      s.uncertain = true;
    }
  }

  /** The story's client, its case, and its deal moved and won into a second case. */
  private async clientCaseAndDeal(s: Story, n: number, w: StoryWrite): Promise<void> {
    s.clientId = (await w('POST', '/v1/clients', { type: 'PF', name: `Cliente ${n}` }, (d) => [
      `client.created ${d.id}`,
    ]))!.id;
    s.caseId = (await w('POST', '/v1/cases', { title: `Processo ${n}`, client_id: s.clientId }, (d) => [
      `case.created ${d.id}`,
    ]))!.id;
    s.dealId = (await w(
      'POST',
      '/v1/deals',
      { title: `Negócio ${n}`, value: s.dealValue, client_id: s.clientId },
      (d) => [`deal.created ${d.id}`],
    ))!.id;
    await w('PUT', `/v1/deals/${s.dealId}/phase`, { phase: DEFAULT_DEAL_PHASES[1].name }, () => [
      `deal.phase_changed ${s.dealId}`,
    ]);
    const won = await w(
      'PUT',
      `/v1/deals/${s.dealId}/won`,
      { final_value: s.dealValue, create_case: true, case_data: { title: `Caso ganho ${n}`, area: 'civel' } },
      (d) =>
        d.case_created ? [`deal.won ${s.dealId}`, `case.created ${d.case_created.id}`] : [`deal.won ${s.dealId}`],
    );
    s.won = true;
    s.wonCaseId = won?.case_created?.id;
    if (!s.wonCaseId) s.uncertain = true;
  }

  /** The story's recurring task completed, case moved, fee paid, client updated, note written and deleted. */
  private async activitiesAndFee(s: Story, n: number, w: StoryWrite): Promise<void> {
    s.recurringId = (await w(
      'POST',
      '/v1/activities',
      {
        type: 'task',
        title: s.recurringTitle,
        case_id: s.caseId,
        due_date: FAR_DUE,
        recurrence: { frequency: 'weekly', interval: 1 },
      },
      (d) => [`activity.created ${d.id}`],
    ))!.id;
    await w('PUT', `/v1/activities/${s.recurringId}/complete`, { notes: 'feito' }, () => [
      `activity.completed ${s.recurringId}`,
    ]);
    s.completed = true;
    await w('PUT', `/v1/cases/${s.caseId}`, { phase: DEFAULT_CASE_PHASES[1] }, () => [
      `case.phase_changed ${s.caseId}`,
    ]);
    s.financialId = (await w(
      'POST',
      '/v1/financial',
      {
        type: 'revenue',
        category: 'honorarios',
        description: `Honorários ${n}`,
        amount: s.amount,
        date: today(),
        client_id: s.clientId,
        case_id: s.caseId,
      },
      (d) => [`financial.created ${d.id}`],
    ))!.id;
    await w('PUT', `/v1/financial/${s.financialId}`, { status: 'paid' }, () => [`financial.paid ${s.financialId}`]);
    s.paid = true;
    await w('PUT', `/v1/clients/${s.clientId}`, { notes: `Atualizado ${n}` }, () => [`client.updated ${s.clientId}`]);
    s.noteId = (await w('POST', '/v1/activities', { type: 'note', title: `Nota ${n}`, case_id: s.caseId }, (d) => [
      `activity.created ${d.id}`,
    ]))!.id;
    await w('DELETE', `/v1/activities/${s.noteId}`, undefined, () => []);
    s.noteDeleted = true;
  }
}

/** One write of a story, answered for good: its data, or null when a retry found it had taken effect. */
type StoryWrite = (
  method: string,
  path: string,
  body: unknown,
  owes: (d: Record<string, JsonAnswer>) => string[],
) => Promise<Record<string, JsonAnswer> | null>;

class Refused extends Error {}

function inEnvelope(b: Answer['body']): boolean {
  if (!b || typeof b !== 'object' || typeof b.success !== 'boolean') return false;
  if (b.success) return 'data' in b;
  return typeof b.error?.code === 'string' && typeof b.error?.message === 'string';
}

/** Today in UTC, YYYY-MM-DD (the teams' zone is São Paulo: the summary's period is a whole year around it). */
export function today(): string {
  return new Date().toISOString().slice(0, 10);
}
