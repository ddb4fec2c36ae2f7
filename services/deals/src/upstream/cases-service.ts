// What the deals service asks the cases service, which owns cases: the case of a
// deal won with create_case. It is created by the cases service's own POST
// /v1/cases with an Idempotency-Key derived from the deal (shared/src/http/idempotency.ts):
// every attempt for one deal sends the same request under the same key, so a
// retry gets the first case back (Idempotent-Replayed) and never makes a second.
import { AppError, type ErrorCode } from '@lpm/shared/errors';
import type { Identity } from '@lpm/shared/identity';
import { isObject, ServiceClient } from '@lpm/shared/upstream/service-client';
import type { CaseRequest } from '../data/deal-entity.ts';

export interface CaseCreated {
  id: string;
  title: string;
}

/** The cases service as the deals domain needs it. */
export interface DealCases {
  /** The case of the deal `dealId` (created once, whatever the number of attempts). */
  createForDeal(who: Identity, dealId: string, request: CaseRequest): Promise<CaseCreated>;
}

export interface CasesServiceOptions {
  baseUrl: string;
  internalToken: string;
  timeoutMs?: number;
  /** How long an attempt waits for a concurrent attempt of the same deal (409 in progress) to finish. */
  patienceMs?: number;
}

const isCase = (d: unknown): d is CaseCreated => isObject(d) && typeof d.id === 'string' && typeof d.title === 'string';
const isError = (e: unknown): e is { code: ErrorCode; message: string; details?: Record<string, unknown> } =>
  isObject(e) && typeof e.code === 'string' && typeof e.message === 'string';

export const caseKeyOf = (dealId: string) => `deal-won-case:${dealId}`;

export class CasesService implements DealCases {
  private readonly opts: CasesServiceOptions;
  private readonly cases: ServiceClient;

  constructor(opts: CasesServiceOptions) {
    this.opts = opts;
    this.cases = new ServiceClient({ name: 'cases', baseUrl: opts.baseUrl, internalToken: opts.internalToken });
  }

  async createForDeal(who: Identity, dealId: string, request: CaseRequest): Promise<CaseCreated> {
    // One key order, so the bytes, and with them the idempotency record's hash, are the same on every attempt.
    const body = { title: request.title, area: request.area, client_id: request.client_id, responsible_id: request.responsible_id };
    const extras = { headers: { 'idempotency-key': caseKeyOf(dealId) }, timeoutMs: this.opts.timeoutMs ?? 10_000 };
    const giveUpAt = Date.now() + (this.opts.patienceMs ?? 15_000);
    for (;;) {
      // The whole identity goes along: the case's first phase is the team's kanban.
      const { status, body: answer } = await this.cases.request<Record<string, any> | null>(who, 'POST', '/v1/cases', body, extras);
      if (status === 201 && isCase(answer?.data)) return { id: answer.data.id, title: answer.data.title };
      const error = answer?.error;
      const inProgress = status === 409 && isError(error) && error.details?.reason === 'idempotency_request_in_progress';
      if (inProgress && Date.now() < giveUpAt) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      // The case's own refusals (a client or responsible no longer there) are the caller's answer.
      if (status >= 400 && status < 500 && !inProgress && isError(error)) throw new AppError(status, error.code, error.message, error.details ?? {});
      throw this.cases.unavailable(new Error(`POST /v1/cases answered ${status}`));
    }
  }
}
