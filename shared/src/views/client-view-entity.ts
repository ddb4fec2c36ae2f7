// The local copy of the clients a service shows beside its records (names on
// cases, deals, activities, financial records), fed by client events: for display
// only. Whether a client exists is asked of the clients service at write time.
import { p } from '@mikro-orm/mongodb';
import type { RecordOf } from '../store/orm.ts';
import { nullableStrings } from '../store/entity-properties.ts';
import { viewEntity } from '../store/entities.ts';

/** The collection's name, for a ViewsRepository<ClientView>. */
export const CLIENT_VIEWS = 'client_views';

export const ClientViewEntity = viewEntity('ClientView', CLIENT_VIEWS, {
  properties: {
    name: p.string(),
    type: p.string(),
    ...nullableStrings('email', 'phone'),
    status: p.string(),
  },
});

export type ClientView = RecordOf<typeof ClientViewEntity>;
