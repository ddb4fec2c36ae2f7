// Case numbers in the CNJ unified format NNNNNNN-DD.AAAA.J.TR.OOOO (Resolução CNJ
// 65/2008): sequence, check digits (ISO 7064 MOD 97-10), year, segment of justice,
// court and unit of origin. Any other number is the team's own free text.
import { JUSTICE, courtOf, type Justice } from './cnj-courts.ts';

const MASKED = /^(\d{7})-(\d{2})\.(\d{4})\.(\d)\.(\d{2})\.(\d{4})$/;
const BARE = /^(\d{7})(\d{2})(\d{4})(\d)(\d{2})(\d{4})$/;

export type NumberInfo =
  | { format: 'cnj'; valid: boolean; year: number; justice: Justice | null; court: string | null; origin: string }
  | { format: 'internal'; valid: null; year: null; justice: null; court: null; origin: null };

const parts = (n: string) => MASKED.exec(n) ?? BARE.exec(n);

/** A number as stored: a CNJ number masked, with or without the mask as sent; any other trimmed. */
export function normalizeCaseNumber(raw: string): string | null {
  const n = raw.trim();
  const p = parts(n);
  return p ? `${p[1]}-${p[2]}.${p[3]}.${p[4]}.${p[5]}.${p[6]}` : n || null;
}

/** The 20 digits of a CNJ number (what search matches it by), or null for any other number. */
export function cnjDigits(n: string): string | null {
  const p = parts(n);
  return p ? p.slice(1).join('') : null;
}

/**
 * Resolução 65/2008 art. 1 §4 and Anexo VIII: DD makes NNNNNNN AAAA J TR OOOO DD,
 * read as one integer, leave remainder 1 when divided by 97.
 */
export function checkDigitsValid(
  sequence: string,
  dd: string,
  year: string,
  j: string,
  tr: string,
  origin: string,
): boolean {
  return BigInt(`${sequence}${year}${j}${tr}${origin}${dd}`) % 97n === 1n;
}

export function numberInfo(n: string): NumberInfo {
  const p = parts(n);
  if (!p) return { format: 'internal', valid: null, year: null, justice: null, court: null, origin: null };
  const [, sequence, dd, year, j, tr, origin] = p;
  const justice = JUSTICE[j as keyof typeof JUSTICE] ?? null;
  const court = courtOf(j, tr);
  const valid = checkDigitsValid(sequence, dd, year, j, tr, origin) && justice !== null && court !== null;
  return { format: 'cnj', valid, year: Number(year), justice, court, origin };
}
