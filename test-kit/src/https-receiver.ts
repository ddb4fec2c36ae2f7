// A real HTTPS webhook receiver for tests: an https.Server on 127.0.0.1 with the
// run's test certificate (localhost, 127.0.0.1, ::1; signed by the test CA of
// test/global-setup.ts) that records every request and answers as told.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { testTlsPaths, trustTestCa } from './test-ca.ts';
import { listenOnLoopback } from './listen.ts';

export interface ReceivedRequest {
  method: string;
  /** Path and query. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body as received. */
  body: string;
  /** Date.now() when the body had arrived. */
  at: number;
}

export interface ReceiverReply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

/**
 * Answers one request: return the reply, or write to `res` yourself (and
 * return nothing). A handler that does neither never answers.
 */
export type ReceiverHandler = (
  req: ReceivedRequest,
  res: ServerResponse,
) => ReceiverReply | void | Promise<ReceiverReply | void>;

export interface HttpsReceiver {
  /** https://127.0.0.1:<port>, no trailing slash: append any path. */
  readonly url: string;
  readonly port: number;
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted so far (to see keep-alive reuse). */
  readonly connections: number;
  /** Replaces the handler for the requests that follow. */
  respond(handler: ReceiverHandler): void;
  close(): Promise<void>;
}

const answerOk: ReceiverHandler = () => ({
  status: 200,
  body: '{"received":true}',
  headers: { 'content-type': 'application/json' },
});

/**
 * Starts a receiver; the default handler answers 200. `tls` replaces the test
 * certificate (e.g. one from an untrusted CA). Also makes this process trust the
 * test CA, so a sender in the test process itself can reach the receiver.
 */
export async function startHttpsReceiver(
  handler: ReceiverHandler = answerOk,
  tls?: { key: string | Buffer; cert: string | Buffer },
): Promise<HttpsReceiver> {
  trustTestCa();
  const paths = testTlsPaths();
  const requests: ReceivedRequest[] = [];
  let current = handler;
  let connections = 0;

  const server = createServer(
    tls ?? { key: readFileSync(paths.serverKey), cert: readFileSync(paths.serverCert) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const received: ReceivedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        requests.push(received);
        Promise.resolve(current(received, res)).then(
          (reply) => {
            if (reply) res.writeHead(reply.status, reply.headers).end(reply.body ?? '');
          },
          (err: unknown) => res.destroy(err instanceof Error ? err : new Error(String(err))),
        );
      });
    },
  );
  server.on('connection', () => connections++);

  const port = await listenOnLoopback(server, 'https receiver');

  return {
    url: `https://127.0.0.1:${port}`,
    port,
    requests,
    get connections() {
      return connections;
    },
    respond(next) {
      current = next;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
