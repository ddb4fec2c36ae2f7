/**
 * `run` made shareable: callers that come while it runs wait for that one run, and
 * its result is answered again, without running, for maxAgeMs after it settled.
 * A run that fails is not kept.
 */
export function recentResult<T>(run: () => Promise<T>, maxAgeMs: number): () => Promise<T> {
  let last: { at: number; value: T } | undefined;
  let running: Promise<T> | undefined;
  const settle = async (): Promise<T> => {
    try {
      const value = await run();
      last = { at: performance.now(), value };
      return value;
    } finally {
      running = undefined;
    }
  };
  return () => (last && performance.now() - last.at < maxAgeMs ? Promise.resolve(last.value) : (running ??= settle()));
}
