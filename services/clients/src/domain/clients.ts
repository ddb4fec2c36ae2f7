// Client use cases (docs/decisions.md §5 "Clients"): PF and PJ field sets, the document
// unique per team, and no deactivation while the client has active cases (asked
// of the cases service at that moment). Every write stores the record with its
// event (data/clients-repository.ts). cases_count is kept on the record, counted
// again by the cases service after each case event that names the client
// (consumers/case-events.ts): reads cost one store read, and a count follows a
// new case within moments, not at once.
import { FieldChanges, trimmedText } from '@lpm/shared/changes';
import { AppError, serviceUnavailable, unknownField, noFieldsToUpdate } from '@lpm/shared/errors';
import { newEvent } from '@lpm/shared/events';
import type { ListQuery } from '@lpm/shared/http/pagination';
import { exact } from '@lpm/shared/http/schemas';
import type { Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import type { Caller } from '@lpm/shared/upstream/service-client';
import { iso } from '@lpm/shared/time';
import type { ClientRecord } from '../data/client-entity.ts';
import type { ClientsRepository } from '../data/clients-repository.ts';
import type {
  ClientDeactivated,
  ClientListQuery,
  CreateClientBody,
  UpdateClientBody,
} from '../contract/client-schemas.ts';
import type { ClientCases } from '../upstream/cases-service.ts';
import { hasActiveCases, typeImmutable } from '../contract/client-errors.ts';
import {
  COMMON_FIELDS,
  completeAddress,
  derivedFields,
  detailShape,
  fieldsOfOtherType,
  fieldsOfType,
  listItemShape,
} from './client-shape.ts';

export interface ClientsDeps {
  clients: ClientsRepository;
  cases: ClientCases;
}

const fields = new FieldChanges<ClientRecord>({
  empty: { tags: [], metadata: {} },
  normalize: {
    name: trimmedText('name'),
    cnpj: (cnpj) => cnpj.toUpperCase(),
    email: (email) => email.toLowerCase(),
    address: completeAddress,
  },
  read: { address: completeAddress },
});

export class Clients {
  private readonly deps: ClientsDeps;

  constructor(deps: ClientsDeps) {
    this.deps = deps;
  }

  private async casesCount(who: Caller, id: string): Promise<number> {
    return (await this.deps.cases.countByClient(who, [id])).get(id) ?? 0;
  }

  /**
   * The records' counts of their cases. A record kept from before counts were
   * kept is counted by the cases service now, and keeps the answer; if keeping it
   * fails (the record busy), the next read asks again.
   */
  private async casesCounts(who: Caller, records: ClientRecord[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    const uncounted: string[] = [];
    for (const r of records) {
      if (typeof r.cases_count === 'number') counts.set(r._id, r.cases_count);
      else uncounted.push(r._id);
    }
    if (uncounted.length === 0) return counts;
    const askedAt = new Date();
    const asked = await this.deps.cases.countByClient(who, uncounted);
    await Promise.all(
      uncounted.map(async (id) => {
        const count = asked.get(id) ?? 0;
        counts.set(id, count);
        await this.deps.clients.keepCasesCount(who.teamId, id, count, askedAt).catch((err) => {
          if (!(err instanceof AppError && err.status === 503)) throw err;
        });
      }),
    );
    return counts;
  }

  /**
   * A case event's news for one of its clients (a case created for it, or moved to
   * or away from it): the client's cases are counted again. Counting is
   * idempotent, so redeliveries are harmless; a client not of the team is skipped.
   * Asked on behalf of the event's actor.
   */
  async recountCases(teamId: string, actorId: string, clientId: string): Promise<void> {
    const askedAt = new Date();
    const count = await this.casesCount({ teamId, userId: actorId }, clientId);
    await this.deps.clients.keepCasesCount(teamId, clientId, count, askedAt).catch((err) => {
      if (!(err instanceof AppError && err.status === 404)) throw err;
    });
  }

  async create(who: Identity, body: CreateClientBody) {
    const { type } = body;
    for (const f of fieldsOfOtherType(type)) if (f in body) throw unknownField(f);
    const now = new Date();
    const base = {
      _id: newId('cli'),
      team_id: who.teamId,
      type,
      status: 'active' as const,
      ...fields.initial([...COMMON_FIELDS, ...fieldsOfType(type)], body),
      deactivated_at: null,
      created_at: now,
      updated_at: now,
      version: 1,
    };
    const record: ClientRecord = { ...base, ...derivedFields(base), cases_count: 0, cases_counted_at: now };
    const detail = detailShape(record, 0);
    await this.deps.clients.insert(record, [newEvent('client.created', who.teamId, detail, null, who.userId)]);
    return detail;
  }

  async get(who: Identity, id: string) {
    const record = await this.deps.clients.get(who.teamId, id);
    return detailShape(record, (await this.casesCounts(who, [record])).get(id) ?? 0);
  }

  /** What other services keep of a client (the cases service checks links and shows names with it). */
  async facts(who: Identity, id: string) {
    const r = await this.deps.clients.get(who.teamId, id);
    return {
      id: r._id,
      name: r.name,
      type: r.type,
      email: r.email,
      phone: r.phone,
      status: r.status,
      updated_at: iso(r.updated_at),
    };
  }

  async list(who: Identity, q: ClientListQuery) {
    const { records, total } = await this.deps.clients.list(who.teamId, q, q);
    const counts = await this.casesCounts(who, records);
    return { items: records.map((r) => listItemShape(r, counts.get(r._id) ?? 0)), total };
  }

  async update(who: Identity, id: string, body: UpdateClientBody) {
    if (Object.keys(body).length === 0) throw noFieldsToUpdate();
    // Asked before the lock is taken: no lock is held across a call to another service.
    const cases = await this.casesFacts(who, id, body.status === 'inactive', true);
    return this.deps.clients.update(who.teamId, id, async (current) => {
      if (body.type !== undefined && body.type !== current.type) throw typeImmutable();
      for (const f of fieldsOfOtherType(current.type)) if (f in body) throw unknownField(f);

      const { next, sent } = fields.apply(current, body, [...COMMON_FIELDS, ...fieldsOfType(current.type)]);
      if (body.type !== undefined) sent.type = current.type;
      let deactivating = false;
      if (body.status !== undefined) {
        sent.status = body.status;
        if (body.status === 'inactive' && current.status === 'active') {
          ensureChecked(cases);
          if (cases.active) throw hasActiveCases();
          next.status = 'inactive';
          next.deactivated_at = new Date();
          deactivating = true;
        } else if (body.status === 'active' && current.status === 'inactive') {
          next.status = 'active';
          next.deactivated_at = null;
        }
      }

      const { changed, previous } = fields.diff(
        [...COMMON_FIELDS, ...fieldsOfType(current.type), 'status', 'deactivated_at'],
        current,
        next,
      );
      if (changed.length === 0) return { result: { id, ...sent, updated_at: iso(current.updated_at) } };

      next.updated_at = new Date();
      Object.assign(next, derivedFields(next));
      const detail = detailShape(next, current.cases_count ?? cases.count);
      const event = newEvent(
        deactivating ? 'client.deactivated' : 'client.updated',
        who.teamId,
        detail,
        previous,
        who.userId,
      );
      const set: Partial<ClientRecord> = { updated_at: next.updated_at, ...derivedFields(next) };
      for (const f of changed) Object.assign(set, { [f]: next[f] });
      return { result: { id, ...sent, updated_at: iso(next.updated_at) }, write: { set, events: [event] } };
    });
  }

  async deactivate(who: Identity, id: string) {
    const cases = await this.casesFacts(who, id, true, false);
    return this.deps.clients.update(who.teamId, id, async (current) => {
      const deactivated = exact<ClientDeactivated>();
      if (current.status === 'inactive')
        return { result: deactivated({ id, status: 'inactive', deactivated_at: iso(current.deactivated_at) }) };
      ensureChecked(cases);
      if (cases.active) throw hasActiveCases();
      const now = new Date();
      const set = { status: 'inactive' as const, deactivated_at: now, updated_at: now };
      const detail = detailShape({ ...current, ...set }, current.cases_count ?? cases.count);
      const event = newEvent(
        'client.deactivated',
        who.teamId,
        detail,
        { status: 'active', deactivated_at: null },
        who.userId,
      );
      return {
        result: deactivated({ id, status: 'inactive', deactivated_at: iso(now) }),
        write: { set, events: [event] },
      };
    });
  }

  async listCases(who: Identity, id: string, q: ListQuery) {
    await this.deps.clients.get(who.teamId, id);
    return this.deps.cases.listForClient(who, id, q);
  }

  /**
   * What a write needs from the cases service, asked before the client's lock is
   * taken, so no lock is held across a call to another service. The cases service
   * owns the rule's data, so the answer stands for the moment of the question
   * (read-your-writes), as it did when asked under the lock. A client already
   * inactive is not asked about (deleting it again needs no other service).
   */
  private async casesFacts(
    who: Identity,
    id: string,
    deactivating: boolean,
    countAlways: boolean,
  ): Promise<CasesFacts> {
    const record = await this.deps.clients.get(who.teamId, id);
    const askActive = deactivating && record.status === 'active';
    const [count, active] = await Promise.all([
      record.cases_count ?? (countAlways || askActive ? this.casesCount(who, id) : 0),
      askActive ? this.deps.cases.hasActiveCases(who, id) : false,
    ]);
    return { count, active, checked: askActive || !deactivating };
  }
}

interface CasesFacts {
  count: number;
  active: boolean;
  /** False when the cases service was not asked (the client was inactive a moment before the lock). */
  checked: boolean;
}

/** The client was reactivated between the question and the lock: the caller retries. */
function ensureChecked(cases: CasesFacts): void {
  if (!cases.checked) throw serviceUnavailable('The client changed during the update; retry');
}
