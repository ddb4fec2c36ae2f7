// A failing store (unreachable, timing out, its backend down) is the caller's 503,
// never a 500. Every error the MongoDB driver raises that reaches the HTTP error
// handler is such a failure: the conditions a repository expects (a duplicate key)
// become domain errors before. Recognised by name, through wrapping causes, so a
// second copy of the driver module would not hide one.
const DRIVER_ERROR = /^Mongo[A-Za-z]*Error$/;

export function isStoreError(err: unknown): boolean {
  return causeChain(err).some((e) => e instanceof Error && DRIVER_ERROR.test(e.name));
}

/** MongoDB's AuthenticationFailed, which FerretDB also answers to credentials it refuses. */
const AUTHENTICATION_FAILED = 18;
/**
 * FerretDB's InternalError (1) when PostgreSQL refuses the credentials FerretDB
 * passes on (PLAIN): SQLSTATE class 28, invalid authorization (28000, 28P01).
 */
const BACKEND_REFUSED_CREDENTIALS = /SQLSTATE 28[0-9A-Z]{3}/;

/** The store refused the credentials: trying again cannot help (a configuration error), unlike a store that does not answer. */
export function isAuthenticationFailure(err: unknown): boolean {
  return causeChain(err).some((e) => {
    if (!(e instanceof Error && DRIVER_ERROR.test(e.name))) return false;
    const code = (e as { code?: unknown }).code;
    return code === AUTHENTICATION_FAILED || (code === 1 && BACKEND_REFUSED_CREDENTIALS.test(e.message));
  });
}

/**
 * FerretDB's InternalError (1) when it cannot reach its PostgreSQL backend, as 1.24
 * words it: a new connection refused ("failed to connect to"), one cut mid-command
 * ("unexpected EOF"), or PostgreSQL's connection-exception and shutdown SQLSTATEs.
 */
const BACKEND_UNREACHABLE = /failed to connect to|unexpected EOF|SQLSTATE (?:08[0-9A-Z]{3}|57P0[1-3])/;

/**
 * The store could not do the work at all (it, or the storage behind it, unreachable
 * or timing out), rather than refusing what was sent: trying each document on its own
 * only adds calls to a store that is down. The driver gave up without an answer (a
 * network error, a timeout: no code), MongoDB labelled it retryable (a primary gone,
 * shutting down), or FerretDB could not reach its backend.
 */
export function isStoreUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; hasErrorLabel?: (label: string) => boolean } | undefined;
  if (typeof e?.code !== 'number') return true;
  if (e.hasErrorLabel?.('RetryableWriteError')) return true;
  return e.code === 1 && BACKEND_UNREACHABLE.test(String(e.message));
}

/** The error and the causes it wraps, a few deep. */
function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err, depth = 0; e && depth < 5; depth++, e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}
