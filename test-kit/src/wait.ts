import type { Logger } from '@lpm/shared/logger';

/** Polls `cond` every 25 ms; rejects naming `what` after timeoutMs. */
export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface LogLine {
  level: string;
  obj: object;
  msg?: string;
}

/** A logger that keeps what it was told, for tests that check what was logged. */
export function captureLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (obj: object, msg?: string) => void lines.push({ level, obj, msg });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export const quietLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** Resolves after `ms`: for tests about time itself (a lease running out, a backoff), never to wait for work to finish. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
