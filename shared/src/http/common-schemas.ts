// Schema fragments that several services' contracts use as they are: one definition each.
import { longText, metadata, nullable, nullableShape, object, out, stringList, typed } from './schemas.ts';

/** The `:id` of a record's path; any text up to 100 characters (an id of another kind is not found). */
export const idParams = object({ id: typed<string>({ type: 'string', maxLength: 100 }) }, ['id']);

/** A linked case in a read shape: its title and number, or null. */
export const caseLink = nullableShape({ id: out.string, title: out.nullableString, number: out.nullableString });

/** A linked client or user in a read shape: its name, or null. */
export const nameLink = nullableShape({ id: out.string, name: out.nullableString });

/** What a case or a deal is written with besides its own fields: a long description, labels and metadata, each nullable. */
export const describedFields = {
  description: nullable(longText()),
  labels: nullable(stringList()),
  metadata: nullable(metadata()),
};
