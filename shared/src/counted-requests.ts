// The store commands of one request's handlers, counted in every process they run in
// (the bench's round trips before an answer: scripts/bench/roundtrips.ts). A request
// opts in with COUNT_COMMANDS_HEADER: the HTTP listener (telemetry.ts) then counts,
// under the request's trace id, every store command sent in the request's context
// until its answer is sent (metrics.ts), and the calls its handlers make to other
// services carry the header on (upstream/service-client.ts). Work the request only
// sets going (the outbox relay's drain, the consumers of its events) runs outside
// its context and is not counted. A request without the header costs one context
// lookup per store command, and allocates nothing.
import { createContextKey, context, type Context } from '@opentelemetry/api';

export const COUNT_COMMANDS_HEADER = 'x-count-store-commands';

/** Traces whose counts are kept, the oldest dropped first: a reader asks right after the answer. */
const TRACES_KEPT = 64;

interface CountedRequest {
  /** The trace's counts in this process, by `<command> <collection>`. */
  commands: Map<string, number>;
  answered: boolean;
}

const COUNTED = createContextKey('lpm.counted-request');
const byTrace = new Map<string, Map<string, number>>();

function countsOf(traceId: string): Map<string, number> {
  let commands = byTrace.get(traceId);
  if (!commands) {
    if (byTrace.size >= TRACES_KEPT) byTrace.delete(byTrace.keys().next().value!);
    byTrace.set(traceId, (commands = new Map<string, number>()));
  }
  return commands;
}

/** `ctx` with its request counted under `traceId` until `answered()` (the answer sent). */
export function countedContext(ctx: Context, traceId: string): { ctx: Context; answered: () => void } {
  const counted: CountedRequest = { commands: countsOf(traceId), answered: false };
  return { ctx: ctx.setValue(COUNTED, counted), answered: () => (counted.answered = true) };
}

/** One store command sent in the active context: counted when a request that opted in has not been answered yet. */
export function countCommand(command: string, collection: string): void {
  const counted = context.active().getValue(COUNTED) as CountedRequest | undefined;
  if (!counted || counted.answered) return;
  const key = `${command} ${collection}`;
  counted.commands.set(key, (counted.commands.get(key) ?? 0) + 1);
}

/** The opt-in header for a call to another service, when the active request is counted. */
export function countedCallHeaders(): Record<string, string> | undefined {
  return context.active().getValue(COUNTED) ? { [COUNT_COMMANDS_HEADER]: '1' } : undefined;
}

/** The commands counted in this process for the trace, by `<command> <collection>`. */
export function commandsOfTrace(traceId: string): Record<string, number> {
  return Object.fromEntries(byTrace.get(traceId) ?? []);
}
