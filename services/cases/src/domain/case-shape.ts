// Read shapes of a case built from its stored record and the linked client and user.
import { exact } from '@lpm/shared/http/schemas';
import { foldText } from '@lpm/shared/text';
import { iso } from '@lpm/shared/time';
import { linkOf, type Links } from '@lpm/shared/views/record-links';
import { PRIORITY_RANK } from '@lpm/shared/priority';
import { dealOriginKey, type CaseRecord } from '../data/case-entity.ts';
import type { CaseCreated, CaseDetail, CaseListItem } from '../contract/case-schemas.ts';
import { cnjDigits, numberInfo } from './cnj-number.ts';

/** Fields a client may send on create, in the order of the read shapes. */
export const WRITABLE_FIELDS = [
  'title',
  'number',
  'area',
  'subject',
  'phase',
  'priority',
  'client_id',
  'responsible_id',
  'sla_date',
  'description',
  'labels',
  'metadata',
] as const;

/** A case's origin key: its deal's, or its own when no deal made it. */
const originKey = (r: Pick<CaseRecord, '_id' | 'origin_deal_id'>) =>
  r.origin_deal_id ? dealOriginKey(r.origin_deal_id) : `none:${r._id}`;

export function derivedFields(
  r: Pick<CaseRecord, '_id' | 'title' | 'number' | 'priority' | 'sla_date' | 'origin_deal_id'>,
) {
  return {
    // A CNJ number is found by its 20 digits as well as masked.
    search_text: foldText([r.title, r.number, r.number && cnjDigits(r.number)].filter(Boolean).join(' | ')),
    title_sort: foldText(r.title),
    priority_rank: PRIORITY_RANK[r.priority],
    sla_missing: r.sla_date ? 0 : 1,
    number_key: r.number ? `n:${r.number}` : `none:${r._id}`,
    origin_key: originKey(r),
  };
}

const identifying = (r: CaseRecord) => ({
  id: r._id,
  title: r.title,
  number: r.number,
  area: r.area,
  subject: r.subject,
  phase: r.phase,
  priority: r.priority,
  status: r.status,
});

const counted = (r: CaseRecord) => ({
  activities_count: Math.max(0, r.activities_count),
  documents_count: r.documents_count,
  sla_date: r.sla_date,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

const described = (r: CaseRecord) => ({
  description: r.description,
  labels: r.labels ?? [],
  metadata: r.metadata ?? {},
  archived_at: iso(r.archived_at),
});

export function listItemShape(r: CaseRecord, links: Links): CaseListItem {
  return exact<CaseListItem>()({
    ...identifying(r),
    client: linkOf(r.client_id, links.clients, ['name', 'type']),
    responsible: linkOf(r.responsible_id, links.users, ['name']),
    ...counted(r),
  });
}

export function detailShape(r: CaseRecord, links: Links): CaseDetail {
  return exact<CaseDetail>()({
    ...identifying(r),
    number_info: r.number ? numberInfo(r.number) : null,
    client: linkOf(r.client_id, links.clients, ['name', 'type', 'email', 'phone']),
    responsible: linkOf(r.responsible_id, links.users, ['name', 'email']),
    ...counted(r),
    ...described(r),
  });
}

/** The create response: linked records as flat ids (docs/decisions.md §10). */
export function createdShape(r: CaseRecord): CaseCreated {
  return exact<CaseCreated>()({
    ...identifying(r),
    client_id: r.client_id,
    responsible_id: r.responsible_id,
    ...counted(r),
    ...described(r),
  });
}

/** The items of GET /v1/clients/{id}/cases. */
export function clientCaseShape(r: CaseRecord) {
  return {
    id: r._id,
    title: r.title,
    number: r.number,
    area: r.area,
    phase: r.phase,
    priority: r.priority,
    status: r.status,
    created_at: iso(r.created_at),
  };
}
