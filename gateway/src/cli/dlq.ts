// The dead-letter commands of the operator CLI: `dlq list` reads a consumer's
// dead-letter queue without removing anything, `dlq replay` moves its messages back
// into the consumer's queue. `--queue` names the consumer's queue (its full name, as
// the services declare it: `<AMQP_EXCHANGE>.<name>`, e.g. `lpm.events.webhooks.fan-out`);
// the DLQ is `<queue>.dlq`. A name that already ends in `.dlq` is taken as the DLQ
// itself and the queue is that name without the suffix. The exchange's parking queue
// (`<AMQP_EXCHANGE>.unrouted`: events published before any queue was bound for them)
// is read the same way, and replayed to the exchange, each under its type.
import type { ChannelModel, ConfirmChannel, GetMessage } from 'amqplib';
import { connectToAnyNode } from '@lpm/shared/messaging/nodes';
import type { CarriedProperties } from '@lpm/shared/messaging/message';
import { parkingQueue } from '@lpm/shared/messaging/publisher';

export const ATTEMPT_HEADER = 'x-attempt';
export const LAST_ERROR_HEADER = 'x-last-error';

export interface DlqQueues {
  /** A consumer's queue, or for the parking queue the exchange it replays to. */
  queue: string;
  dlq: string;
  /** Set for the parking queue: replayed to this exchange, not into a queue. */
  exchange?: string;
}

const PARKING_SUFFIX = parkingQueue('');

export function dlqQueues(name: string): DlqQueues {
  const n = name.trim();
  if (n.endsWith(PARKING_SUFFIX)) {
    const exchange = n.slice(0, -PARKING_SUFFIX.length);
    return { queue: exchange, dlq: n, exchange };
  }
  return n.endsWith('.dlq') ? { queue: n.slice(0, -'.dlq'.length), dlq: n } : { queue: n, dlq: `${n}.dlq` };
}

export interface DeadMessage {
  id: string | null;
  type: string | null;
  attempt: number | null;
  last_error: string | null;
}

function describe(m: GetMessage): DeadMessage {
  const h = m.properties.headers ?? {};
  const carried: CarriedProperties = m.properties;
  let body: { id?: unknown; type?: unknown } = {};
  try {
    const parsed: unknown = JSON.parse(m.content.toString('utf8'));
    if (parsed && typeof parsed === 'object') body = parsed;
  } catch {
    // an unparseable body: its id and type come from the properties, if any
  }
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  const attempt = Number(h[ATTEMPT_HEADER]);
  const lastError: unknown = h[LAST_ERROR_HEADER];
  return {
    id: str(body.id) ?? str(carried.messageId),
    type: str(body.type) ?? str(carried.type),
    attempt: Number.isSafeInteger(attempt) && attempt > 0 ? attempt : null,
    last_error: Buffer.isBuffer(lastError) ? lastError.toString('utf8') : str(lastError),
  };
}

/** Runs `work` on a confirm channel of a fresh connection to a node of `url`, then closes it. */
async function withChannel<T>(url: string, work: (ch: ConfirmChannel) => Promise<T>): Promise<T> {
  const conn: ChannelModel = await connectToAnyNode(url, {
    timeout: 10_000,
    clientProperties: { connection_name: 'lpm-admin' },
  });
  try {
    const ch = await conn.createConfirmChannel();
    ch.on('error', () => {});
    return await work(ch);
  } finally {
    await conn.close().catch(() => {});
  }
}

/** checkQueue that says which queue is missing (the broker's 404 closes the channel). */
async function count(ch: ConfirmChannel, queue: string): Promise<number> {
  try {
    return (await ch.checkQueue(queue)).messageCount;
  } catch (err) {
    throw new Error(`queue ${queue} does not exist`, { cause: err });
  }
}

/**
 * The messages in the DLQ, oldest first, left in place: each is fetched unacked
 * and all are returned to the queue (nack with requeue) when the channel closes,
 * keeping their order.
 */
export async function listDlq(
  url: string,
  name: string,
): Promise<{ queue: string; dlq: string; count: number; messages: DeadMessage[] }> {
  const { queue, dlq } = dlqQueues(name);
  return withChannel(url, async (ch) => {
    const total = await count(ch, dlq);
    const messages: DeadMessage[] = [];
    for (let i = 0; i < total; i++) {
      const m = await ch.get(dlq, { noAck: false });
      if (m === false) break;
      messages.push(describe(m));
    }
    if (messages.length > 0) ch.nackAll(true);
    await ch.close();
    return { queue, dlq, count: messages.length, messages };
  });
}

/**
 * Moves the messages in the DLQ back into the queue (default exchange, persistent,
 * their headers kept but for x-death, attempts starting over at 1), each acked in
 * the DLQ only after its republish is confirmed. Messages that arrive in the DLQ
 * meanwhile are left for the next run.
 */
export async function replayDlq(url: string, name: string): Promise<{ queue: string; dlq: string; replayed: number }> {
  const { queue, dlq, exchange } = dlqQueues(name);
  return withChannel(url, async (ch) => {
    if (exchange === undefined) await count(ch, queue);
    else await ch.checkExchange(exchange);
    const total = await count(ch, dlq);
    let returned = false;
    // A mandatory publish no queue takes comes back (before its confirm): the original stays in the DLQ.
    ch.on('return', () => (returned = true));
    let replayed = 0;
    for (let i = 0; i < total; i++) {
      const m = await ch.get(dlq, { noAck: false });
      if (m === false) break;
      const p: CarriedProperties = m.properties;
      const headers: Record<string, unknown> = { ...(m.properties.headers ?? {}), 'x-replayed-from': dlq };
      for (const k of Object.keys(headers))
        if (k === 'x-death' || k.startsWith('x-first-death') || k.startsWith('x-last-death')) delete headers[k];
      for (const k of [ATTEMPT_HEADER, 'x-failures', 'x-transient-failures', 'x-transient-since']) delete headers[k];
      // A parked event goes back to the exchange under its type, for the queues bound by now.
      const routingKey = exchange === undefined ? queue : (p.type ?? describe(m).type ?? '');
      await new Promise<void>((resolve, reject) => {
        ch.publish(
          exchange ?? '',
          routingKey,
          m.content,
          {
            persistent: true,
            mandatory: true,
            headers,
            ...(p.contentType ? { contentType: p.contentType } : {}),
            ...(p.type ? { type: p.type } : {}),
            ...(p.messageId ? { messageId: p.messageId } : {}),
            ...(p.timestamp ? { timestamp: p.timestamp } : {}),
          },
          (err) => (err ? reject(new Error(`republish to ${queue} not confirmed`, { cause: err })) : resolve()),
        );
      });
      if (returned) {
        throw new Error(
          exchange === undefined
            ? `queue ${queue} did not take the message (deleted?); it stays in ${dlq}`
            : `no queue is bound for ${routingKey} on ${exchange} yet; it stays in ${dlq}`,
        );
      }
      ch.ack(m);
      replayed++;
    }
    await ch.close();
    return { queue, dlq, replayed };
  });
}
