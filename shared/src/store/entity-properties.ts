// Property groups that many entity definitions share, spread into their `properties`
// where the fields stand, as outboxProperties (orm.ts) is: the stored field names are
// the groups' keys.
import { p } from '@mikro-orm/mongodb';

/** A team's record: its id, and the team's, which every read and write of it filters by. */
export const teamKeyProperties = {
  _id: p.string().primary(),
  team_id: p.string(),
};

/** When a record was made and when it last changed. */
export const timestampProperties = {
  created_at: p.datetime(),
  updated_at: p.datetime(),
};

/** The timestamps, and the version each write checks and bumps (RecordStore). */
export const versionedProperties = {
  ...timestampProperties,
  version: p.integer(),
};

const dueInstant = () => p.datetime().strictNullable();

/**
 * The due fields of a record's time-driven signals (jobs/time-signals.ts): each the
 * instant its signal is due, null when disarmed.
 */
export const signalProperties = <const K extends string>(...fields: K[]) =>
  Object.fromEntries(fields.map((field) => [field, dueInstant()])) as Record<K, ReturnType<typeof dueInstant>>;
