// A failing store (unreachable, timing out, its backend down) is the caller's 503,
// never a 500. Every error the MongoDB driver raises that reaches the HTTP error
// handler is such a failure: the conditions a repository expects (a duplicate key)
// become domain errors before. Recognised by name, through wrapping causes, so a
// second copy of the driver module would not hide one.
const DRIVER_ERROR = /^Mongo[A-Za-z]*Error$/;

export function isStoreError(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++) {
    if (e instanceof Error && DRIVER_ERROR.test(e.name)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
