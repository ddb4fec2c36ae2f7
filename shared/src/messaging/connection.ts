// The one AMQP connection of a Broker, kept up in the background: a failed attempt
// or a lost connection is retried with capped exponential backoff (with jitter, so
// replicas do not reconnect in step), and a service starts while the broker is still
// down. The URL may name several nodes of a cluster (brokerNodes): a lost connection
// is made again to the next node at once, and the backoff waits only after every node
// refused. Each connection carries one confirm channel for publishing (a new one once
// a publish on it went unconfirmed); the listener hears when a connection comes up
// (consumers set up again) or goes away.
import { connect as amqpConnect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import type { Logger } from '../logger.ts';
import { backoffDelayMs } from '../backoff.ts';
import { redactUrl } from '../redact-url.ts';
import { brokerNodes } from './nodes.ts';

export interface ConnectionOptions {
  url: string;
  /** Asserted (durable topic) on every connection before it counts as up. */
  exchange: string;
  logger: Logger;
  connectionName?: string;
  reconnectMinMs: number;
  reconnectMaxMs: number;
}

export interface ConnectionListener {
  /** A connection is up, its exchange asserted and its waiters resolved. */
  up(): void;
  /** The current connection is gone (also when it was closed on purpose). */
  down(): void;
}

export class Connection {
  private readonly opts: ConnectionOptions;
  private readonly log: Logger;
  private readonly listener: ConnectionListener;
  private readonly nodes: string[];
  /** The node tried first by the next attempt: the one after the node last tried. */
  private nextNode = 0;
  private conn: ChannelModel | null = null;
  private pub: ConfirmChannel | null = null;
  private isClosed = false;
  private down = false;
  private error: unknown = undefined;
  private attempts = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private connecting: Promise<void> | null = null;
  private renewing = false;
  private waiters: Array<(err?: Error) => void> = [];

  constructor(opts: ConnectionOptions, listener: ConnectionListener) {
    this.opts = opts;
    this.log = opts.logger;
    this.listener = listener;
    this.nodes = brokerNodes(opts.url);
    // Processes start at different nodes, so their connections (and the queues they declare, led by
    // the node that declares them) spread over the cluster rather than all landing on the first node.
    this.nextNode = Math.floor(Math.random() * this.nodes.length);
  }

  /** The current connection; null while down. */
  get current(): ChannelModel | null {
    return this.conn;
  }

  /** The confirm channel for publishing on the current connection; null while down. */
  get publishChannel(): ConfirmChannel | null {
    return this.pub;
  }

  /** Why the last attempt failed or the last connection closed: the cause of "not connected" errors. */
  get lastError(): unknown {
    return this.error;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Makes the first connection attempt; when it fails, retries go on in the background. */
  start(): Promise<void> {
    this.connecting = this.connectOnce();
    return this.connecting;
  }

  /** Resolves once connected; rejects after timeoutMs. */
  waitFor(timeoutMs: number): Promise<void> {
    if (this.pub !== null) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (err?: Error) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        reject(new Error(`broker not connected after ${timeoutMs} ms`, { cause: this.error }));
      }, timeoutMs);
      this.waiters.push(done);
    });
  }

  /**
   * Stops reconnecting and refuses the waiters, lets `drain` finish (consumers and
   * their handlers, which still need the connection), then closes the connection.
   */
  async close(drain: () => Promise<unknown>): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    for (const w of this.waiters.splice(0)) w(new Error('broker closed'));
    await drain();
    await this.connecting;
    const conn = this.conn;
    this.conn = null;
    this.pub = null;
    if (conn) await conn.close().catch(() => {});
  }

  /** Tries each node once, from nextNode on; the backoff follows only when all of them failed. */
  private async connectOnce(): Promise<void> {
    for (let i = 0; i < this.nodes.length && !this.isClosed; i++) {
      const at = this.nextNode;
      this.nextNode = (at + 1) % this.nodes.length;
      if (await this.connectTo(this.nodes[at], i === this.nodes.length - 1)) return;
    }
  }

  /** Resolves true when connected to `url` (or closed meanwhile); a failure is retried later only when `last`. */
  private async connectTo(url: string, last: boolean): Promise<boolean> {
    if (this.isClosed) return true;
    let conn: ChannelModel | undefined;
    try {
      conn = await amqpConnect(url, {
        timeout: 10_000,
        clientProperties: this.opts.connectionName ? { connection_name: this.opts.connectionName } : {},
      });
      const c = conn;
      // 'error' is always followed by 'close'; only the close drives recovery.
      c.on('error', (err: Error) => this.log.debug({ err }, 'amqp connection error'));
      c.on('blocked', (reason: string) => this.log.warn({ reason }, 'amqp connection blocked by the broker'));
      c.on('close', (err?: Error) => this.onClosed(c, err));
      if (this.isClosed) {
        await c.close().catch(() => {});
        return true;
      }
      const pub = await this.openPublishChannel(c);
      if (this.isClosed) {
        await c.close().catch(() => {});
        return true;
      }
      this.conn = c;
      this.pub = pub;
      this.attempts = 0;
      if (this.down) this.log.info({ exchange: this.opts.exchange, node: redactUrl(url) }, 'amqp connection restored');
      this.down = false;
      for (const w of this.waiters.splice(0)) w();
      this.listener.up();
      return true;
    } catch (err) {
      this.error = err;
      if (conn) await conn.close().catch(() => {});
      if (!last) {
        this.log.debug({ err, node: redactUrl(url) }, 'amqp node refused; trying the next');
        return false;
      }
      if (!this.down) this.log.warn({ err }, 'amqp connection failed; retrying in the background');
      else this.log.debug({ err }, 'amqp connection attempt failed');
      this.down = true;
      this.scheduleReconnect();
      return false;
    }
  }

  /**
   * Replaces `stale` (the publish channel, when it still is) with a new one on the same
   * connection, then closes it: its confirms left pending are refused, so their
   * publishes are sent again on the new channel. For a channel whose publishes go
   * unconfirmed: a channel learns a queue's leader when it first publishes to it, and
   * keeps sending there. When that leader's node is frozen, the cluster gives the node
   * up and elects new leaders, but a channel that met the queue meanwhile is never told;
   * a new channel asks where the leader is now.
   */
  async renewPublishChannel(stale: ConfirmChannel): Promise<void> {
    const c = this.conn;
    if (this.pub !== stale || c === null || this.renewing) return;
    this.renewing = true;
    try {
      const pub = await this.openPublishChannel(c);
      if (this.conn !== c || this.pub !== stale) {
        await pub.close().catch(() => {});
        return;
      }
      this.pub = pub;
      this.log.warn({}, 'amqp publish channel left unconfirmed; publishing on a new one');
      await stale.close().catch(() => {});
    } catch (err) {
      this.log.debug({ err }, 'amqp publish channel not renewed; the connection is going');
    } finally {
      this.renewing = false;
    }
  }

  /** A confirm channel on `c` with the exchange asserted; one lost while current closes the connection. */
  private async openPublishChannel(c: ChannelModel): Promise<ConfirmChannel> {
    const pub = await c.createConfirmChannel();
    pub.on('error', (err: Error) => this.log.error({ err }, 'amqp publish channel error'));
    // The current publish channel lost on a live connection: reconnect everything rather
    // than juggle half-open state (this only happens on broker-side errors).
    pub.on('close', () => {
      if (this.pub !== pub) return;
      this.pub = null;
      if (this.conn === c && !this.isClosed) c.close().catch(() => {});
    });
    await pub.assertExchange(this.opts.exchange, 'topic', { durable: true });
    return pub;
  }

  private onClosed(conn: ChannelModel, err?: Error): void {
    if (this.conn !== conn) return;
    this.conn = null;
    this.pub = null;
    this.listener.down();
    if (this.isClosed) return;
    this.error = err ?? new Error('amqp connection closed');
    if (!this.down) this.log.warn({ err }, 'amqp connection lost; reconnecting');
    this.down = true;
    // Another node may be up now: try the next at once, the backoff only once all have failed.
    if (this.nodes.length > 1 && !this.reconnectTimer) this.connecting = this.connectOnce();
    else this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.isClosed || this.reconnectTimer) return;
    const { reconnectMinMs: min, reconnectMaxMs: max } = this.opts;
    const delay = backoffDelayMs(this.attempts, { firstMs: min, maxMs: max, jitter: 0.2 });
    this.attempts++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connecting = this.connectOnce();
    }, delay);
  }
}
