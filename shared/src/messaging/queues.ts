// Every queue is declared by one function here, so the publishing and the consuming side
// always ask for the same arguments: the broker refuses (406) a declaration that differs.
// Every queue is a quorum queue (replicated by Raft on a cluster, and as safe on one
// node: a confirmed publish is on disk) unless AMQP_QUEUE_TYPE=classic asks for the
// single-replica classic queues. A queue an earlier deployment declared with the other
// type is moved to the one asked for at declaration, its messages kept
// (queue-migration.ts).
import type { Channel, ChannelModel } from 'amqplib';
import { migrateClassicQueue, scratchChannel, type QueueSpec } from './queue-migration.ts';

export type { QueueSpec } from './queue-migration.ts';

/**
 * Deliveries of one message (redeliveries after a consumer, a channel or a node is
 * lost count) before the broker dead-letters it to `<queue>.dlq`: the bound of a
 * poison message that kills its consumer before any attempt is counted. Far above
 * maxAttempts, since the attempt counter bounds handler failures and a failover
 * returns every message in flight once.
 */
export const DELIVERY_LIMIT = 20;

export type QueueArguments = QueueSpec['arguments'];

export type QueueType = 'quorum' | 'classic';

/** The queue type AMQP_QUEUE_TYPE asks for (quorum when unset). */
export function queueType(): QueueType {
  const asked = process.env.AMQP_QUEUE_TYPE ?? 'quorum';
  if (asked !== 'quorum' && asked !== 'classic')
    throw new Error(`AMQP_QUEUE_TYPE must be quorum or classic, not ${asked}`);
  return asked;
}

/** The arguments only a quorum queue takes, or none. */
const quorum = (args: QueueArguments): QueueArguments =>
  queueType() === 'quorum' ? { 'x-queue-type': 'quorum', ...args } : {};

/**
 * Dead-lettering that the broker repeats until the target queue confirms: a message
 * of a retry chain is never dropped between the two queues. It needs the source to
 * refuse publishes rather than drop its head when full.
 */
const AT_LEAST_ONCE: QueueArguments = { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' };

/** A consumer's queue (a work queue too): poison messages go to `<queue>.dlq` after DELIVERY_LIMIT deliveries. */
export const mainQueueArguments = (queue: string): QueueArguments => ({
  ...quorum({ ...AT_LEAST_ONCE, 'x-delivery-limit': DELIVERY_LIMIT }),
  'x-dead-letter-exchange': '',
  'x-dead-letter-routing-key': `${queue}.dlq`,
});

/** A dead-letter queue or the parking queue: kept until an operator replays it. */
export const holdingQueueArguments = (): QueueArguments => quorum({});

/** A retry or delay queue: its messages return into `queue` after `delayMs` (queue-level TTL). */
export const delayQueueArguments = (queue: string, delayMs: number): QueueArguments => ({
  ...quorum(AT_LEAST_ONCE),
  'x-message-ttl': delayMs,
  'x-dead-letter-exchange': '',
  'x-dead-letter-routing-key': queue,
});

/**
 * The broker's refusal of a declaration for a queue an earlier deployment declared:
 * classic, or without an argument this code declares. The broker names the first
 * argument that differs, not always the queue type. A value that differs (a retry
 * delay changed) stays a refusal: that is a mistake in the code, not a deployment to move.
 */
export function isEarlierDeclaration(err: unknown): boolean {
  const e = err as { code?: number; message?: string };
  return e?.code === 406 && /inequivalent arg '(x-queue-type'|[^']+'.* but current is none)/.test(e.message ?? '');
}

/**
 * Declares each queue on a channel of its own (a refusal closes the channel, never
 * the caller's), moving one an earlier deployment declared classic to the quorum queue first.
 */
export async function declareQueues(conn: ChannelModel, specs: QueueSpec[]): Promise<void> {
  let ch: Channel | null = null;
  try {
    for (const spec of specs) {
      ch ??= await scratchChannel(conn);
      try {
        await ch.assertQueue(spec.name, { durable: true, arguments: spec.arguments });
      } catch (err) {
        ch = null;
        if (!isEarlierDeclaration(err)) throw err;
        await migrateClassicQueue(conn, spec);
      }
    }
  } finally {
    await ch?.close().catch(() => {});
  }
}
