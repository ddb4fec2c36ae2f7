// The response schemas that the services' records have in common: one definition each.
import { named, okResponse, out, pageResponse, shape, type Schema } from './schemas.ts';

/** A record's read shapes, as its routes answer with them. */
export interface RecordShapes {
  /** GET /:id */
  detail: Schema;
  /** POST */
  created: Schema;
  /** PUT /:id: the fields sent */
  changes: Schema;
  /** GET /, one item of the page */
  listItem: Schema;
}

/** The answers of a record's read, create, update and list routes. */
export const recordResponses = (shapes: RecordShapes) => ({
  detail: okResponse(200, shapes.detail),
  created: okResponse(201, shapes.created),
  updated: okResponse(200, shapes.changes),
  list: pageResponse(shapes.listItem),
});

/** The answer of a move to a closing status: the record's id, its status and when it took it (`stamp`). */
export const stampedStatus = <K extends string>(title: string, description: string, stamp: K) =>
  named(
    title,
    description,
    shape({
      id: out.string,
      status: out.string,
      ...({ [stamp]: out.nullableString } as Record<K, typeof out.nullableString>),
    }),
  );

/**
 * A record's create and update answers, both in its `written` shape (links as flat
 * ids): the create's complete, the update's holding the fields sent, as `changes` says.
 */
export const writtenShapes = <S extends Schema>(title: string, noun: string, written: S, changes: string) => ({
  created: named(`${title}Created`, `A created ${noun}: links as flat ids.`, written),
  changes: named(`${title}Changes`, changes, written, { partial: true }),
});
