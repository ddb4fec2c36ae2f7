// Entity definitions by the kind of record they keep: the kind's keys (entity-properties.ts)
// first, then the entity's own properties, and its indexes as defineEntity takes them.
import { defineEntity, p, type EntityMetadataWithProperties } from '@mikro-orm/mongodb';
import { storedRecordProperties, teamKeyProperties, viewProperties } from './entity-properties.ts';

type Properties = Record<string, unknown>;

/** What an entity declares besides its name and collection: its own properties, its indexes. */
type EntityParts<K extends Properties, P extends Properties> = { properties: P } & Pick<
  EntityMetadataWithProperties<string, string, K & P>,
  'indexes' | 'uniques'
>;

/** The definer of the entities whose properties start with `keys`. */
const keyedBy =
  <const K extends Properties>(keys: K) =>
  <const N extends string, const P extends Properties>(name: N, collection: string, parts: EntityParts<K, P>) =>
    defineEntity<N, string, K & P>({ name, collection, ...parts, properties: { ...keys, ...parts.properties } });

/** A record under a string id of its own. */
export const idEntity = keyedBy({ _id: p.string().primary() });

/** A team's record (teamKeyProperties). */
export const teamEntity = keyedBy(teamKeyProperties);

/** A local copy of another service's record (viewProperties). */
export const viewEntity = keyedBy(viewProperties);

/** A record a RecordStore keeps (storedRecordProperties). */
export const storedEntity = keyedBy(storedRecordProperties);
