// The cap on one amount of money (docs/limits.md). Amounts are kept as integer
// cents and summed as such; a sum stays exact while it is below 2^53 cents, which
// at this cap is 90,071 records at the cap, all in one sum, and as far beyond as
// the amounts are below it.
export const MONEY_MAX = 1e9;

/** An amount in integer cents; null when it has more than 2 decimals or is not a finite number. */
export function centsOf(amount: number): number | null {
  if (!Number.isFinite(amount)) return null;
  const cents = Math.round(amount * 100);
  return cents / 100 === amount ? cents : null;
}

/** Integer cents as the API's amount; null stays null. */
export function fromCents(cents: number): number;
export function fromCents(cents: number | null): number | null;
export function fromCents(cents: number | null): number | null {
  return cents === null ? null : cents / 100;
}
