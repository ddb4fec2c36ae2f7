// What the deals service asks the cases service, which owns cases: the case of a
// deal won with create_case, and its archiving when the deal is lost or archived
// before its won completed. The case carries its deal under a unique key in the
// cases service (POST /internal/deal-cases), so every attempt for one deal, however
// late or concurrent, gets the one case back and never makes a second.
import { AppError, type ErrorCode } from '@lpm/shared/errors';
import type { Identity } from '@lpm/shared/identity';
import { isClientFacts, type ClientFacts } from '@lpm/shared/upstream/clients-service';
import { isObject, ServiceClient, type Caller } from '@lpm/shared/upstream/service-client';

/** The case asked for a deal won with create_case. */
export interface CaseRequest {
  title: string;
  area: string | null;
  client_id: string | null;
  responsible_id: string | null;
}

export interface CaseCreated {
  id: string;
  title: string;
}

/** The case of a deal, and the deal's client as the cases service's check found it just now (absent when it made none). */
export interface CaseForDeal extends CaseCreated {
  client?: ClientFacts;
}

/** The cases service as the deals domain needs it. */
export interface DealCases {
  /** The case of the deal `dealId` (created once, whatever the number of attempts). */
  createForDeal(who: Identity, dealId: string, request: CaseRequest): Promise<CaseForDeal>;
  /** Archives the case made for the deal, if one was; resolves with its id, or null. */
  archiveForDeal(who: Caller, dealId: string): Promise<string | null>;
}

export interface CasesServiceOptions {
  baseUrl: string;
  internalToken: string;
  timeoutMs?: number;
}

type Answer = { data?: unknown; error?: unknown } | null;

const isCase = (d: unknown): d is CaseCreated & { client?: unknown } =>
  isObject(d) && typeof d.id === 'string' && typeof d.title === 'string';
const isError = (e: unknown): e is { code: ErrorCode; message: string; details?: Record<string, unknown> } =>
  isObject(e) && typeof e.code === 'string' && typeof e.message === 'string';
const isArchived = (d: unknown): d is { archived: string | null } =>
  isObject(d) && (d.archived === null || typeof d.archived === 'string');

export class DealCasesService implements DealCases {
  private readonly opts: CasesServiceOptions;
  private readonly cases: ServiceClient;

  constructor(opts: CasesServiceOptions) {
    this.opts = opts;
    this.cases = new ServiceClient({ name: 'cases', baseUrl: opts.baseUrl, internalToken: opts.internalToken });
  }

  async createForDeal(who: Identity, dealId: string, request: CaseRequest): Promise<CaseForDeal> {
    const body = {
      deal_id: dealId,
      title: request.title,
      area: request.area,
      client_id: request.client_id,
      responsible_id: request.responsible_id,
    };
    // The whole identity goes along: the case's first phase is the team's kanban.
    const { status, body: answer } = await this.cases.request<Answer>(
      who,
      'POST',
      '/internal/deal-cases',
      body,
      this.extras(),
    );
    const made = answer?.data;
    if ((status === 200 || status === 201) && isCase(made)) {
      return { id: made.id, title: made.title, ...(isClientFacts(made.client) ? { client: made.client } : {}) };
    }
    throw this.refusal(status, answer, 'POST /internal/deal-cases');
  }

  async archiveForDeal(who: Caller, dealId: string): Promise<string | null> {
    const path = `/internal/deal-cases/${encodeURIComponent(dealId)}/archive`;
    const { status, body: answer } = await this.cases.request<Answer>(who, 'POST', path, {}, this.extras());
    if (status === 200 && isArchived(answer?.data)) return answer.data.archived;
    throw this.refusal(status, answer, `POST ${path}`);
  }

  private extras() {
    return { timeoutMs: this.opts.timeoutMs ?? 10_000 };
  }

  /** The case's own refusals (a client or responsible no longer there) are the caller's answer; anything else is 503. */
  private refusal(status: number, answer: Answer, what: string): Error {
    const error = answer?.error;
    if (status >= 400 && status < 500 && isError(error))
      return new AppError(status, error.code, error.message, error.details ?? {});
    return this.cases.unavailable(new Error(`${what} answered ${status}`));
  }
}
