// Moving a queue an earlier deployment declared classic to the quorum queue of the
// same name, without losing a message. Its messages go to a holding quorum queue
// `<name>.moving` (bound as the queue is, so events published meanwhile land there
// too); the classic queue is deleted once empty and declared again as a quorum queue
// (and bound); the holding queue is drained into it and deleted. A message leaves its
// source only once its copy is confirmed, so a run cut short loses nothing: a message
// in flight is redelivered (a duplicate at worst, which consumers skip by event id).
import type { Channel, ChannelModel, ConfirmChannel, GetMessage, Options } from 'amqplib';

export interface QueueSpec {
  name: string;
  arguments: Record<string, string | number>;
  /** A consumer's queue: the exchange and the patterns it is bound with. */
  bound?: { exchange: string; patterns: string[] };
}

/** Messages moved per publisher confirm. */
const BATCH = 200;
/** Rounds of emptying the classic queue while publishers still fill it. */
const ROUNDS = 20;

export const movingQueueName = (queue: string) => `${queue}.moving`;

export async function scratchChannel(conn: ChannelModel): Promise<Channel> {
  const ch = await conn.createChannel();
  ch.on('error', () => {});
  return ch;
}

/** Moves `spec.name`, found classic, to a quorum queue declared with spec.arguments; resolves with the messages moved. */
export async function migrateClassicQueue(conn: ChannelModel, spec: QueueSpec): Promise<number> {
  const { name, bound } = spec;
  const holding = movingQueueName(name);
  let moved = 0;
  await onConfirmChannel(conn, async (ch) => {
    await ch.assertQueue(holding, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    for (const p of bound?.patterns ?? []) await ch.bindQueue(holding, bound!.exchange, p);
  });
  for (let round = 0; ; round++) {
    const deleted = await onConfirmChannel(conn, async (ch) => {
      moved += await move(ch, name, holding);
      await ch.deleteQueue(name, { ifEmpty: true });
      return true;
    }).catch((err: unknown) => {
      // 404: another process finished the move first. 406: a message arrived since: move again.
      const code = (err as { code?: number }).code;
      if (code === 404) return true;
      if (code === 406 && round < ROUNDS) return false;
      throw err;
    });
    if (deleted) break;
  }
  await onConfirmChannel(conn, async (ch) => {
    await ch.assertQueue(name, { durable: true, arguments: spec.arguments });
    for (const p of bound?.patterns ?? []) await ch.bindQueue(name, bound!.exchange, p);
    for (const p of bound?.patterns ?? []) await ch.unbindQueue(holding, bound!.exchange, p);
    moved += await move(ch, holding, name);
  });
  // A quorum queue has no delete-if-empty: it is deleted once found empty, unbound and
  // unconsumed (only a move by another process, which has passed this point too, could fill it).
  await onConfirmChannel(conn, async (ch) => {
    moved += await move(ch, holding, name);
    const { messageCount, consumerCount } = await ch.checkQueue(holding);
    if (messageCount === 0 && consumerCount === 0) await ch.deleteQueue(holding);
  }).catch((err: unknown) => {
    if ((err as { code?: number }).code !== 404) throw err;
  });
  return moved;
}

async function onConfirmChannel<T>(conn: ChannelModel, work: (ch: ConfirmChannel) => Promise<T>): Promise<T> {
  const ch = await conn.createConfirmChannel();
  ch.on('error', () => {});
  try {
    return await work(ch);
  } finally {
    await ch.close().catch(() => {});
  }
}

/** Moves every message of `from` into `to` (default exchange), acking a batch once its copies are confirmed. */
async function move(ch: ConfirmChannel, from: string, to: string): Promise<number> {
  let moved = 0;
  for (;;) {
    let last: GetMessage | null = null;
    let n = 0;
    for (; n < BATCH; n++) {
      const m = await ch.get(from, { noAck: false });
      if (m === false) break;
      ch.publish('', to, m.content, carried(m));
      last = m;
    }
    if (!last) return moved;
    await ch.waitForConfirms();
    ch.ack(last, true);
    moved += n;
  }
}

/** The properties a moved message keeps. */
function carried(m: GetMessage): Options.Publish {
  const p = m.properties as unknown as Record<string, unknown>;
  const keep = [
    'contentType',
    'contentEncoding',
    'headers',
    'correlationId',
    'replyTo',
    'messageId',
    'timestamp',
    'type',
    'appId',
  ];
  const options: Record<string, unknown> = { persistent: true };
  for (const k of keep) if (p[k] !== undefined && p[k] !== null) options[k] = p[k];
  return options;
}
