// What the publications service asks the activities service, which owns deadlines:
// a rule computed on the team's court calendar (POST /v1/deadlines/compute), and a
// deadline activity made once per publication (its Idempotency-Key is the
// publication's id, so retries and replicas get the one activity).
import type { Identity } from '@lpm/shared/identity';
import { isObject, type ServiceClient } from '@lpm/shared/upstream/service-client';

export interface DeadlineRule {
  start: { made_available: string };
  days: number;
  counting: 'business' | 'calendar';
}

export interface TrailDay {
  date: string;
  counted: boolean;
  reason: string | null;
}

export interface ComputedDeadline {
  start_date: string;
  due_date: string;
  publication_date: string | null;
  days: number;
  trail: TrailDay[];
}

export interface NewDeadlineActivity {
  publicationId: string;
  title: string;
  caseId: string;
  description: string;
  rule: DeadlineRule;
}

/** The activities service as the publications domain needs it. */
export interface PublicationDeadlines {
  compute(who: Identity, rule: DeadlineRule): Promise<ComputedDeadline>;
  /** The activity's id; null when the activities service refused it (the case gone): nothing to retry. */
  createDeadline(who: Identity, activity: NewDeadlineActivity): Promise<string | null>;
}

const isComputed = (d: unknown): d is ComputedDeadline =>
  isObject(d) &&
  typeof d.start_date === 'string' &&
  typeof d.due_date === 'string' &&
  Array.isArray(d.trail) &&
  typeof d.days === 'number';

export class ActivitiesService implements PublicationDeadlines {
  private readonly activities: ServiceClient;

  constructor(activities: ServiceClient) {
    this.activities = activities;
  }

  compute(who: Identity, rule: DeadlineRule): Promise<ComputedDeadline> {
    return this.activities.data(who, 'POST', '/v1/deadlines/compute', isComputed, rule);
  }

  async createDeadline(who: Identity, a: NewDeadlineActivity): Promise<string | null> {
    const body = {
      type: 'deadline',
      title: a.title,
      description: a.description,
      case_id: a.caseId,
      deadline_rule: a.rule,
      metadata: { publication_id: a.publicationId },
    };
    const res = await this.activities.request<{ data?: { id?: unknown } }>(who, 'POST', '/v1/activities', body, {
      headers: { 'idempotency-key': `publication:${a.publicationId}` },
    });
    const id = res.body?.data?.id;
    if ((res.status === 200 || res.status === 201) && typeof id === 'string') return id;
    // 409: the same key's first run is still under way; the repair asks again.
    if (res.status === 409) throw this.activities.unavailable(new Error('deadline activity under way'));
    if (res.status === 404 || res.status === 422 || res.status === 400) return null;
    throw this.activities.unavailable(new Error(`POST /v1/activities answered ${res.status}`));
  }
}
