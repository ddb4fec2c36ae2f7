import { ulid } from 'ulid';

export type IdKind = 'deal' | 'cli' | 'act' | 'case' | 'fin' | 'wh' | 'evt' | 'team' | 'user' | 'key' | 'dlv' | 'job';

const ULID_RE = /^[0-9a-hjkmnp-tv-z]{26}$/;

/** A new id: kind prefix + lower-case ULID (time-ordered), e.g. `cli_01jd3k...`. */
export function newId(kind: IdKind): string {
  return `${kind}_${ulid().toLowerCase()}`;
}

/** True when s is an id of this kind; a path id of another kind is answered 404. */
export function isId(kind: IdKind, s: string): boolean {
  return s.startsWith(`${kind}_`) && ULID_RE.test(s.slice(kind.length + 1));
}
