// Property groups that many entity definitions share, spread into their `properties`
// where the fields stand, as outboxProperties (orm.ts) is: the stored field names are
// the groups' keys.
import { p } from '@mikro-orm/mongodb';
import { outboxProperties } from './orm.ts';

/** A team's record: its id, and the team's, which every read and write of it filters by. */
export const teamKeyProperties = {
  _id: p.string().primary(),
  team_id: p.string(),
};

/**
 * A local copy of another service's record, fed by its events: the record's keys,
 * and the record's updated_at the copy reflects (older news never overwrites newer).
 */
export const viewProperties = {
  ...teamKeyProperties,
  as_of: p.datetime(),
};

/** When a record was made and when it last changed. */
export const timestampProperties = {
  created_at: p.datetime(),
  updated_at: p.datetime(),
};

/**
 * The fields of every record a RecordStore keeps: its keys, its timestamps, the
 * version each write checks and bumps, and its outbox.
 */
export const storedRecordProperties = {
  ...teamKeyProperties,
  ...timestampProperties,
  version: p.integer(),
  ...outboxProperties,
};

/** One property of each of `fields`, each as `property()` declares it. */
const alike = <const K extends string, P>(fields: readonly K[], property: () => P) =>
  Object.fromEntries(fields.map((field) => [field, property()])) as Record<K, P>;

/**
 * The due fields of a record's time-driven signals (jobs/time-signals.ts): each the
 * instant its signal is due, null when disarmed.
 */
export const signalProperties = <const K extends string>(...fields: K[]) =>
  alike(fields, () => p.datetime().strictNullable());

/** Properties each a string, or null when the record has none (an unset text, no linked record). */
export const nullableStrings = <const K extends string>(...fields: K[]) =>
  alike(fields, () => p.string().strictNullable());
