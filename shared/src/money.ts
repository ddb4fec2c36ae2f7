// The cap on one amount of money (docs/limits.md). Amounts are kept as integer
// cents and summed as such; a sum stays exact while it is below 2^53 cents, which
// at this cap is 90,071 records at the cap, all in one sum, and as far beyond as
// the amounts are below it.
export const MONEY_MAX = 1e9;
