// Read-shape fragments and builders that several services' records share (as common-schemas.ts
// and record-responses.ts hold theirs): one definition each.
import { named, nullableShape, out, shape, type Schema } from './schemas.ts';

/** A linked user or client in a detail read shape: its name and e-mail, or null. */
export const contactLink = nullableShape({ id: out.string, name: out.nullableString, email: out.nullableString });

/** The client of a case or a deal in a list: its name and type, or null. */
export const listedClient = nullableShape({ id: out.string, name: out.nullableString, type: out.nullableString });

/** The client and responsible user of a case or a deal as its written shape has them: flat ids. */
export const ownerIds = { client_id: out.nullableString, responsible_id: out.nullableString };

/** `describedFields` as the read shapes give them back. */
export const describedShape = { description: out.nullableString, labels: out.strings, metadata: out.freeObject };

/** A record's list item, `${title}ListItem`; `what` names one record ("A case"). */
export const listItemShape = <P extends Record<string, Schema>>(title: string, what: string, fields: P) =>
  named(`${title}ListItem`, `${what} in a list.`, shape(fields));
