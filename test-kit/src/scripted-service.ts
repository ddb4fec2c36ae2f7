// A real HTTP server standing in for another service, answering each request with
// whatever the test scripted last (status, raw body), and recording the requests.
import { createServer, type IncomingMessage } from 'node:http';
import { listenOnLoopback } from './listen.ts';

export interface ScriptedService {
  url: string;
  requests: { method: string; url: string }[];
  /** What every request gets from now on, after `delayMs`. */
  answer(status: number, body: string | object, delayMs?: number): void;
  close(): Promise<void>;
}

export async function startScriptedService(): Promise<ScriptedService> {
  let reply = { status: 200, body: '{}', delayMs: 0 };
  const requests: ScriptedService['requests'] = [];
  const server = createServer((req: IncomingMessage, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '' });
    req.resume();
    const { status, body, delayMs } = reply;
    req.on('end', () =>
      setTimeout(() => res.writeHead(status, { 'content-type': 'application/json' }).end(body), delayMs),
    );
  });
  const port = await listenOnLoopback(server, 'scripted service');
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer: (status, body, delayMs = 0) =>
      (reply = { status, body: typeof body === 'string' ? body : JSON.stringify(body), delayMs }),
    close: () => new Promise((done) => server.close(() => done())),
  };
}
