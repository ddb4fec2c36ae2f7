// The nodes an AMQP_URL names: one URL, or a cluster's node URLs separated by commas.
// Each connection asks for heartbeats every HEARTBEAT_S (unless its URL sets its own),
// so a node that hangs without closing its sockets (frozen, cut off) is given up for
// the next within two heartbeats rather than the broker's default of a minute or more.
import { connect as amqpConnect, type ChannelModel, type SocketOptions } from 'amqplib';

const HEARTBEAT_S = 5;

export function brokerNodes(url: string): string[] {
  return url
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '')
    .map((u) => (/[?&]heartbeat=/.test(u) ? u : `${u}${u.includes('?') ? '&' : '?'}heartbeat=${HEARTBEAT_S}`));
}

/** A connection to the first of the nodes that answers (a command's one connection); rejects with the last refusal. */
export async function connectToAnyNode(url: string, options: SocketOptions = {}): Promise<ChannelModel> {
  let failure: unknown = new Error('AMQP_URL names no node');
  for (const node of brokerNodes(url)) {
    try {
      return await amqpConnect(node, options);
    } catch (err) {
      failure = err;
    }
  }
  throw failure;
}
