// How long the store may take before a caller gives up on it: every operation has
// a budget, so a store that hangs with its connections open fails a request (503)
// rather than holding it forever.

/** How long an operation waits for a reachable store before it fails. */
export const STORE_SELECTION_TIMEOUT_MS = 5000;

/**
 * How long one operation may take in all (the driver's client-side timeout, which
 * also asks the store for maxTimeMS). On expiry the driver drops the connection, so
 * a pool that a hung store held serves again once the store is back.
 */
export const STORE_OPERATION_TIMEOUT_MS = 5000;

/**
 * The options of an operation over a whole collection (a first backfill, a range
 * delete): a budget that grows with the data, each batch of a cursor on its own.
 */
export const SWEEP = { timeoutMS: 300_000 } as const;
export const SWEEP_CURSOR = { timeoutMS: 300_000, timeoutMode: 'iteration' } as const;
