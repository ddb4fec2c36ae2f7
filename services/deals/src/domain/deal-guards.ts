// What the writes of a deal check before they change it: state moves need an open
// deal, and an event's links, fetched before the lock, must still be the deal's.
import { serviceUnavailable } from '@lpm/shared/errors';
import type { Links } from '@lpm/shared/views/record-links';
import type { DealRecord } from '../data/deal-entity.ts';
import { dealArchived, dealClosed } from '../contract/deal-errors.ts';
import { detailShape } from './deal-shape.ts';

/** won, lost and phase moves need an open deal. */
export function requireOpen(r: Pick<DealRecord, 'status'>): void {
  if (r.status === 'arquivado') throw dealArchived();
  if (r.status !== 'ativo') throw dealClosed();
}

/** The event's detail shape from links fetched before the lock; a responsible changed in between is a retry. */
export function detailWith(record: DealRecord, links: Links) {
  if (record.responsible_id && !links.users.has(record.responsible_id))
    throw serviceUnavailable('The deal changed during the update; retry');
  return detailShape(record, links);
}
