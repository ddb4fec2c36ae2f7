// The one logger of a process: pino, JSON lines, secrets redacted. Modules that
// only log take the narrow `Logger`, so tests can pass a capture.
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';

type LogFn = (obj: object, msg?: string) => void;

/** The part of a pino logger that library code uses. */
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

export function createLogger(name: string, level = process.env.LOG_LEVEL ?? 'info'): FastifyBaseLogger {
  return pino({
    level,
    base: { service: name },
    redact: ['req.headers.authorization', 'req.headers["x-lpm-internal-token"]'],
  });
}
