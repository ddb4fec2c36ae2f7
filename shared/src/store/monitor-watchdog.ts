// Recovers a MongoClient whose server monitor has wedged.
//
// The driver (7.6 to 7.9) checks that the monitor's connection is open, then
// serialises the `hello` and writes it; when the connection closes in between (the
// store dropping every connection at once), the write goes to a destroyed socket
// and the heartbeat waits for a 'drain' that never comes, with no timeout. No
// heartbeat ever ends, the server stays Unknown after the store is back, and every
// operation fails server selection until the process restarts (seen with the store
// behind a TCP proxy that is cut: test/store-outage.test.ts). A heartbeat that
// outlives every timeout the driver gives it is such a wedge: the watchdog closes
// the client and connects it again (retrying until the store answers).
import type { MongoClient } from 'mongodb';
import type { Logger } from '../logger.ts';

export interface MonitorWatchdogOptions {
  /** How often heartbeats are looked at. Default 5000. */
  checkEveryMs?: number;
  /** A heartbeat older than this is wedged. Default: connectTimeoutMS + heartbeatFrequencyMS + 5 s. */
  wedgedAfterMs?: number;
}

export interface MonitorWatchdog {
  /** Reconnects the client if a heartbeat has wedged; resolves with whether it did. Also runs on its own timer. */
  check(): Promise<boolean>;
  stop(): void;
}

export function watchMonitor(client: MongoClient, logger: Logger, opts: MonitorWatchdogOptions = {}): MonitorWatchdog {
  const { connectTimeoutMS, heartbeatFrequencyMS } = client.options;
  const wedgedAfterMs = opts.wedgedAfterMs ?? (connectTimeoutMS || 30_000) + heartbeatFrequencyMS + 5000;
  const started = new Map<string, number>();
  const onStarted = (e: { connectionId: string }) => {
    if (!started.has(e.connectionId)) started.set(e.connectionId, Date.now());
  };
  const onEnded = (e: { connectionId: string }) => started.delete(e.connectionId);
  client.on('serverHeartbeatStarted', onStarted);
  client.on('serverHeartbeatSucceeded', onEnded);
  client.on('serverHeartbeatFailed', onEnded);
  // Closing the topology ends its monitors without a heartbeat event.
  const onClosed = () => started.clear();
  client.on('topologyClosed', onClosed);

  let busy = false;
  // After a close, until connect() succeeds: operations fail (503, retried) meanwhile.
  let disconnected = false;
  const connect = async () => {
    try {
      await client.connect();
      disconnected = false;
      logger.info({}, 'store client reconnected');
    } catch (err) {
      logger.warn({ err }, 'store reconnect failed; tried again shortly');
    }
  };
  const check = async (): Promise<boolean> => {
    if (busy) return false;
    busy = true;
    try {
      if (disconnected) {
        await connect();
        return false;
      }
      const now = Date.now();
      const wedged = [...started].filter(([, at]) => now - at > wedgedAfterMs).map(([address]) => address);
      if (wedged.length === 0) return false;
      logger.error({ servers: wedged, wedgedAfterMs }, 'store monitor wedged; reconnecting the store client');
      started.clear();
      disconnected = true;
      await client.close();
      await connect();
      return true;
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => {
    check().catch((err: unknown) => logger.error({ err }, 'store monitor watchdog failed'));
  }, opts.checkEveryMs ?? 5000);
  timer.unref();

  return {
    check,
    stop() {
      clearInterval(timer);
      client.off('serverHeartbeatStarted', onStarted);
      client.off('serverHeartbeatSucceeded', onEnded);
      client.off('serverHeartbeatFailed', onEnded);
      client.off('topologyClosed', onClosed);
    },
  };
}
