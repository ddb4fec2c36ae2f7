// Helpers every API test uses, whether it calls an app in process (inject) or a
// running system (fetch through the gateway).
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { identityHeaders, type Identity } from '@lpm/shared/identity';
import type { JsonAnswer } from './json.ts';

/** An answer as tests see it: from `app.inject`, or `{ status, body }` from a running system. */
export type Answer = LightMyRequestResponse | { status: number; body: JsonAnswer };

/** Asserts the error envelope (status, code, exact message, details object) and returns its `error`. */
export function expectError(res: Answer, status: number, code: string, message: string) {
  const body = 'json' in res ? res.json() : res.body;
  const actual = 'statusCode' in res ? res.statusCode : res.status;
  expect({ status: actual, success: body?.success, code: body?.error?.code, message: body?.error?.message }).toEqual({
    status,
    success: false,
    code,
    message,
  });
  expect(typeof body.error.details).toBe('object');
  return body.error;
}

/** A service app called in process as the gateway would call it, for `who`. */
export function callAs(app: () => FastifyInstance, internalToken: string) {
  return (who: Identity, opts: InjectOptions): Promise<LightMyRequestResponse> =>
    app().inject({ ...opts, headers: { ...identityHeaders(who, internalToken), ...(opts.headers ?? {}) } });
}

/**
 * A request sent exactly as written: fetch and inject would resolve `..` and
 * re-encode the path. The answer's body is parsed as JSON.
 */
export function rawRequest(
  port: number | string,
  path: string,
  opts: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: JsonAnswer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: opts.method ?? 'GET',
      path,
      headers: { 'content-type': 'application/json', ...opts.headers },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Bytes written to a socket as they are, for requests no HTTP client would send (a
 * request line that is not HTTP, a header past the size limit); the answer is read
 * until the server closes the connection.
 */
export function rawSocketRequest(
  port: number | string,
  bytes: string,
): Promise<{ status: number; headers: Record<string, string>; body: JsonAnswer }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port) });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (c) => (text += String(c)));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n\r\n')) });
    });
    socket.end(bytes);
  });
}
