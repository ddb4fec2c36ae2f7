// How a change a caller sends meets a stored record, the same for every domain:
// a sent value is normalized before it is stored (null means "empty" for lists
// and maps), a stored value is read as the API shows it (instants as ISO
// strings), and an update knows which fields it changed and what they were
// before (the events' previous_attributes).
import { invalidField } from './errors.ts';
import { iso } from './time.ts';

/** What a caller may send for a stored value: objects may be partial (the record completes them). */
export type Sent<T> = T extends Date | readonly unknown[] ? T : T extends object ? Partial<T> : T;

/** A create or update body, as far as the record's fields go. */
export type SentFields<R> = { [K in keyof R]?: Sent<R[K]> | null };

/** A normalizer for a required text field: trimmed, and 400 `<field> must not be empty` when nothing is left. */
export const trimmedText =
  (field: string) =>
  (value: string): string => {
    const trimmed = value.trim();
    if (!trimmed) throw invalidField(field, `${field} must not be empty`);
    return trimmed;
  };

export interface FieldRules<R> {
  /** Stored in place of null or absence: [] for lists, {} for maps. Other fields store null. */
  empty?: Partial<R>;
  /** Turns a sent value (never null) into the stored one: trim, case, completing a partial object. */
  normalize?: { [K in keyof R]?: (value: Sent<NonNullable<R[K]>>) => R[K] };
  /** Reads a stored value as the API shows it, where the default (instants as ISO strings) is not enough. */
  read?: { [K in keyof R]?: (value: R[K]) => unknown };
}

export interface Changes<R> {
  changed: (keyof R & string)[];
  /** The changed fields' values before, as read. */
  previous: Record<string, unknown>;
}

export class FieldChanges<R extends object> {
  private readonly rules: FieldRules<R>;

  constructor(rules: FieldRules<R>) {
    this.rules = rules;
  }

  private emptyOf<K extends keyof R>(field: K): R[K] | null {
    return this.rules.empty?.[field] ?? null;
  }

  /** A stored value as the API shows it. */
  read<K extends keyof R>(field: K, value: R[K] | null | undefined): unknown {
    if (value === null || value === undefined) return this.emptyOf(field);
    const reader = this.rules.read?.[field];
    if (reader) return reader(value);
    return value instanceof Date ? iso(value) : value;
  }

  /** The value a sent field is stored as. */
  normalize<K extends keyof R>(field: K, value: Sent<R[K]> | null | undefined): R[K] | null {
    if (value === null || value === undefined) return this.emptyOf(field);
    const normalizer = this.rules.normalize?.[field];
    return normalizer ? normalizer(value as Sent<NonNullable<R[K]>>) : (value as R[K]);
  }

  /** The stored values of `fields` for a new record: sent ones normalized, the others empty. */
  initial<K extends keyof R & string>(fields: readonly K[], body: SentFields<R>): Pick<R, K> {
    const out: Partial<R> = {};
    for (const f of fields) out[f] = this.normalize(f, body[f]) as R[K];
    return out as Pick<R, K>;
  }

  /**
   * The record with every sent field of `fields` applied, and what an update
   * answer echoes of them (each sent field as it now reads).
   */
  apply(
    current: R,
    body: SentFields<R>,
    fields: readonly (keyof R & string)[],
  ): { next: R; sent: Record<string, unknown> } {
    const next: R = { ...current };
    const sent: Record<string, unknown> = {};
    for (const f of fields) {
      if (!(f in body)) continue;
      next[f] = this.normalize(f, body[f]) as R[typeof f];
      sent[f] = this.read(f, next[f]);
    }
    return { next, sent };
  }

  /** Which of `fields` differ between two versions of a record (compared as read), with their previous values. */
  diff(fields: readonly (keyof R & string)[], current: R, next: R): Changes<R> {
    const changed = fields.filter(
      (f) => JSON.stringify(this.read(f, current[f])) !== JSON.stringify(this.read(f, next[f])),
    );
    return { changed, previous: Object.fromEntries(changed.map((f) => [f, this.read(f, current[f])])) };
  }
}
