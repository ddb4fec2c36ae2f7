/** Lower case without diacritics, for accent-insensitive search ("José" -> "jose"). */
export function foldText(s: string): string {
  return s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A NUL, or half of a surrogate pair without its other half (the `u` flag keeps whole pairs together). */
const UNSTORABLE = /\0|[\uD800-\uDFFF]/gu;

/**
 * `s` without NUL characters and lone surrogates: text from outside (a webhook
 * receiver's answer) made safe to store. FerretDB refuses a string holding NUL, and
 * a lone surrogate has no UTF-8 form (BSON would store U+FFFD in its place).
 */
export function storableText(s: string): string {
  return s.replace(UNSTORABLE, '');
}
