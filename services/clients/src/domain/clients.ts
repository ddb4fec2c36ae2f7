// Client use cases. Every write stores the record and its event in one document
// write (the outbox), then nudges the relay.
import type { Identity } from '@lpm/shared/identity';
import { newId, isId } from '@lpm/shared/ids';
import { newEvent, type DomainEvent } from '@lpm/shared/events';
import { outboxOnInsert, outboxUpdate } from '@lpm/shared/outbox/fields';
import { withDocumentLock } from '@lpm/shared/store/lock';
import { collectionOf, type Orm } from '@lpm/shared/store/orm';
import { isDuplicateKey } from '@lpm/shared/store/duplicate-key';
import { badRequest, businessRule, duplicate, invalidField, notFound, unknownField, serviceUnavailable } from '@lpm/shared/errors';
import { pageWindow, parseSort, type ListQuery } from '@lpm/shared/http/pagination';
import { escapeRegex, foldText } from '@lpm/shared/text';
import { ClientEntity, type Address, type ClientRecord } from '../data/client-entity.ts';
import type { CaseDirectory } from './case-directory.ts';
import {
  COMMON_FIELDS,
  completeAddress,
  derivedFields,
  detailShape,
  fieldsOfOtherType,
  fieldsOfType,
  listItemShape,
  type ClientType,
} from './client-shape.ts';

export interface ClientsDeps {
  orm: Orm;
  cases: CaseDirectory;
  relay: { kick(collection: string, id: string): void };
}

export interface ClientListQuery extends ListQuery {
  type?: ClientType;
  status?: 'active' | 'inactive';
  segment?: string;
  search?: string;
}

type Body = Record<string, unknown>;

const SORT_FIELD: Record<string, string> = { created_at: 'created_at', updated_at: 'updated_at', name: 'name_sort' };
const clientNotFound = () => notFound('Client not found');

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A field's value as clients read it, so comparisons and previous_attributes use one form. */
function readValue(field: string, value: unknown): unknown {
  if (field === 'address') return completeAddress(value as Address | null);
  if (value instanceof Date) return iso(value);
  return value ?? (field === 'tags' ? [] : field === 'metadata' ? {} : null);
}

function normalize(field: string, value: unknown): unknown {
  if (value === null) return field === 'tags' ? [] : field === 'metadata' ? {} : null;
  switch (field) {
    case 'name': {
      const name = String(value).trim();
      if (!name) throw invalidField('name', 'name must not be empty');
      return name;
    }
    case 'cnpj':
      return String(value).toUpperCase();
    case 'email':
      return String(value).toLowerCase();
    case 'address':
      return completeAddress(value as Partial<Address>);
    default:
      return value;
  }
}

function duplicateDocument(type: ClientType) {
  return type === 'PF'
    ? duplicate('Duplicate CPF', 'duplicate_cpf', { field: 'cpf' })
    : duplicate('Duplicate CNPJ', 'duplicate_cnpj', { field: 'cnpj' });
}

export class Clients {
  private readonly deps: ClientsDeps;

  constructor(deps: ClientsDeps) {
    this.deps = deps;
  }

  private get collection() {
    return collectionOf<ClientRecord>(this.deps.orm, 'clients');
  }

  private async load(teamId: string, id: string): Promise<ClientRecord> {
    if (!isId('cli', id)) throw clientNotFound();
    const em = this.deps.orm.em.fork();
    const found = await em.findOne(ClientEntity, { _id: id, team_id: teamId });
    if (!found) throw clientNotFound();
    return found as unknown as ClientRecord;
  }

  private async casesCount(who: Identity, id: string): Promise<number> {
    return (await this.deps.cases.countByClient(who, [id])).get(id) ?? 0;
  }

  async create(who: Identity, body: Body) {
    const type = body.type as ClientType;
    for (const f of fieldsOfOtherType(type)) if (f in body) throw unknownField(f);
    const now = new Date();
    const record = { _id: newId('cli'), team_id: who.teamId, type, status: 'active' } as ClientRecord;
    for (const f of [...COMMON_FIELDS, ...fieldsOfType(type)]) {
      (record as unknown as Body)[f] = f in body ? normalize(f, body[f]) : readValue(f, undefined);
    }
    Object.assign(record, { deactivated_at: null, created_at: now, updated_at: now, version: 1 });
    Object.assign(record, derivedFields(record));
    const detail = detailShape(record, 0);
    const event = newEvent('client.created', who.teamId, detail, null, who.userId);
    try {
      await this.collection.insertOne({ ...record, ...outboxOnInsert([event]) });
    } catch (e) {
      if (isDuplicateKey(e)) throw duplicateDocument(type);
      throw e;
    }
    this.deps.relay.kick('clients', record._id);
    return detail;
  }

  async get(who: Identity, id: string) {
    const record = await this.load(who.teamId, id);
    return detailShape(record, await this.casesCount(who, id));
  }

  /** What other services keep of a client (the cases service checks links and shows names with it). */
  async facts(who: Identity, id: string) {
    const r = await this.load(who.teamId, id);
    return { id: r._id, name: r.name, type: r.type, email: r.email, phone: r.phone, status: r.status, updated_at: iso(r.updated_at) };
  }

  async list(who: Identity, q: ClientListQuery) {
    const filter: Body = { team_id: who.teamId };
    if (q.type) filter.type = q.type;
    if (q.status) filter.status = q.status;
    if (q.segment) filter.segment = q.segment;
    const search = q.search?.trim();
    if (search) {
      const or: Body[] = [{ search_text: new RegExp(escapeRegex(foldText(search))) }];
      const bare = search.replace(/[\s.\-/]/g, '');
      if (/^\d+$/.test(bare)) or.push({ document_digits: new RegExp(escapeRegex(bare)) });
      filter.$or = or;
    }
    const sort = parseSort(q.sort, '-created_at');
    const dir = sort.direction === 1 ? 'asc' : 'desc';
    const { skip, limit } = pageWindow(q);
    const em = this.deps.orm.em.fork();
    const [rows, total] = await em.findAndCount(ClientEntity, filter as never, {
      orderBy: [{ [SORT_FIELD[sort.field]]: dir }, { _id: dir }] as never,
      limit,
      offset: skip,
    });
    const records = rows as unknown as ClientRecord[];
    const counts = await this.deps.cases.countByClient(who, records.map((r) => r._id));
    return { items: records.map((r) => listItemShape(r, counts.get(r._id) ?? 0)), total };
  }

  async update(who: Identity, id: string, body: Body) {
    if (Object.keys(body).length === 0) throw badRequest('No fields to update');
    return this.locked(id, async () => {
      const current = await this.load(who.teamId, id);
      if (body.type !== undefined && body.type !== current.type) {
        throw businessRule('Client type cannot be changed', 'client_type_immutable', { field: 'type' });
      }
      for (const f of fieldsOfOtherType(current.type)) if (f in body) throw unknownField(f);

      const next: ClientRecord = { ...current };
      const sent: Body = {};
      for (const [f, v] of Object.entries(body)) {
        if (f === 'type' || f === 'status') continue;
        (next as unknown as Body)[f] = normalize(f, v);
        sent[f] = readValue(f, (next as unknown as Body)[f]);
      }
      if (body.type !== undefined) sent.type = current.type;
      let deactivating = false;
      if (body.status !== undefined) {
        sent.status = body.status;
        if (body.status === 'inactive' && current.status === 'active') {
          await this.refuseWithActiveCases(who, id);
          next.status = 'inactive';
          next.deactivated_at = new Date();
          deactivating = true;
        } else if (body.status === 'active' && current.status === 'inactive') {
          next.status = 'active';
          next.deactivated_at = null;
        }
      }

      const changed = [...COMMON_FIELDS, ...fieldsOfType(current.type), 'status', 'deactivated_at'].filter(
        (f) =>
          JSON.stringify(readValue(f, (current as unknown as Body)[f])) !==
          JSON.stringify(readValue(f, (next as unknown as Body)[f])),
      );
      if (changed.length === 0) return { id, ...sent, updated_at: iso(current.updated_at) };

      next.updated_at = new Date();
      next.version = current.version + 1;
      Object.assign(next, derivedFields(next));
      const previous = Object.fromEntries(changed.map((f) => [f, readValue(f, (current as unknown as Body)[f])]));
      const detail = detailShape(next, await this.casesCount(who, id));
      const event = newEvent(deactivating ? 'client.deactivated' : 'client.updated', who.teamId, detail, previous, who.userId);
      const set: Body = { updated_at: next.updated_at, version: next.version, ...derivedFields(next) };
      for (const f of changed) set[f] = (next as unknown as Body)[f];
      await this.write(current, set, event);
      return { id, ...sent, updated_at: iso(next.updated_at) };
    });
  }

  async deactivate(who: Identity, id: string) {
    return this.locked(id, async () => {
      const current = await this.load(who.teamId, id);
      if (current.status === 'inactive') return { id, status: 'inactive', deactivated_at: iso(current.deactivated_at) };
      await this.refuseWithActiveCases(who, id);
      const now = new Date();
      const next: ClientRecord = { ...current, status: 'inactive', deactivated_at: now, updated_at: now, version: current.version + 1 };
      const detail = detailShape(next, await this.casesCount(who, id));
      const event = newEvent('client.deactivated', who.teamId, detail, { status: 'active', deactivated_at: null }, who.userId);
      const set = { status: 'inactive', deactivated_at: now, updated_at: now, version: next.version };
      await this.write(current, set, event);
      return { id, status: 'inactive', deactivated_at: iso(now) };
    });
  }

  async listCases(who: Identity, id: string, q: ListQuery) {
    await this.load(who.teamId, id);
    return this.deps.cases.listForClient(who, id, q);
  }

  private async refuseWithActiveCases(who: Identity, id: string) {
    if (await this.deps.cases.hasActiveCases(who, id)) {
      throw businessRule('Client has active cases', 'client_has_active_cases');
    }
  }

  /**
   * Read-modify-write of one client runs under a document lock shared with the
   * outbox relay: FerretDB applies concurrent updates of one document without
   * isolation, so a filter on `version` alone would not stop a lost update.
   */
  private locked<T>(id: string, fn: () => Promise<T>): Promise<T> {
    if (!isId('cli', id)) throw clientNotFound();
    return withDocumentLock(this.deps.orm.em.getConnection().getDb(), 'clients', id, fn);
  }

  private async write(current: ClientRecord, set: Body, event: DomainEvent): Promise<void> {
    try {
      const res = await this.collection.updateOne(
        { _id: current._id, team_id: current.team_id, version: current.version },
        outboxUpdate({ $set: set }, [event]),
      );
      if (res.matchedCount === 0) throw serviceUnavailable('The client changed during the update; retry');
    } catch (e) {
      if (isDuplicateKey(e)) throw duplicateDocument(current.type);
      throw e;
    }
    this.deps.relay.kick('clients', current._id);
  }
}
