// Property groups that many entity definitions declare alike, spread into their
// `properties` as outboxProperties (orm.ts) is. Each entity still names where a
// group stands among its own fields; the stored field names are the groups' keys.
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
