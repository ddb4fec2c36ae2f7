// Configuration is read from the environment once, at start, and validated as a
// whole: a process with a bad or missing setting refuses to start and says why.
import { MongoClient } from 'mongodb';
import { hidePasswordOf, redactUrl } from './redact-url.ts';

export class ConfigError extends Error {
  constructor(problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

type Parser<T> = (raw: string | undefined, name: string) => T;
type Spec<T> = { [K in keyof T]: readonly [envName: string, parse: Parser<T[K]>] };

export function readConfig<T>(spec: Spec<T>, env: NodeJS.ProcessEnv = process.env): T {
  const problems: string[] = [];
  const out = {} as T;
  for (const key of Object.keys(spec) as (keyof T)[]) {
    const [envName, parse] = spec[key];
    const raw = env[envName];
    try {
      out[key] = parse(raw === '' ? undefined : raw, envName);
    } catch (e) {
      problems.push(`${envName}: ${(e as Error).message}`);
    }
  }
  if (problems.length) throw new ConfigError(problems);
  return out;
}

export const str =
  (fallback?: string): Parser<string> =>
  (raw) => {
    if (raw !== undefined) return raw;
    if (fallback === undefined) throw new Error('is required');
    return fallback;
  };

export const optional: Parser<string | undefined> = (raw) => raw;

/** A secret has no default: it must be given. */
export const secret: Parser<string> = (raw) => {
  if (!raw) throw new Error('is required (a secret has no default)');
  if (raw.length < 16) throw new Error('must be at least 16 characters');
  return raw;
};

/** The bytes of a secret written as hex or base64 (base64url too), or null when it is neither. */
function secretBytes(raw: string): number | null {
  if (/^(?:[0-9a-fA-F]{2})+$/.test(raw)) return raw.length / 2;
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)) return Buffer.from(raw, 'base64').length;
  return null;
}

/**
 * A shared secret that must be random bytes: at least `minBytes` of them, written as
 * hex or base64 (`openssl rand -hex 32`). Anything shorter, or not so written (a
 * chosen word or phrase), is refused.
 */
export const randomSecret =
  (minBytes: number): Parser<string> =>
  (raw) => {
    const bytes = raw ? secretBytes(raw) : null;
    if (bytes === null || bytes < minBytes) {
      throw new Error(
        `must be at least ${minBytes} random bytes, written as hex (${minBytes * 2} characters) or base64: generate one with \`openssl rand -hex ${minBytes}\``,
      );
    }
    return raw!;
  };

/** INTERNAL_TOKEN: the credential between the gateway and the services (it opens every internal route). */
export const INTERNAL_TOKEN_BYTES = 32;

export const int =
  (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): Parser<number> =>
  (raw) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`must be an integer from ${min} to ${max}`);
    return n;
  };

export const bool =
  (fallback: boolean): Parser<boolean> =>
  (raw) => {
    if (raw === undefined) return fallback;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    throw new Error('must be true or false');
  };

/** Throws on a URL its client would refuse. */
type UrlCheck = (value: string) => void;

/** The WHATWG URL parser: fetch (undici), amqplib and ioredis read their URLs with it. */
const whatwgUrl: UrlCheck = (value) => void new URL(value);

/**
 * The MongoDB driver's own parser (what `MongoClient` does before it connects, which
 * is nothing over the network): multi-host replica sets, mongodb+srv, its options
 * and the percent-encoding of credentials, none of which the WHATWG parser takes.
 */
const mongoDriverUrl: UrlCheck = (value) => void new MongoClient(value);

/**
 * A URL with one of `protocols`, as its client's parser (`check`) reads it. A
 * message naming it shows its password as *** (redact-url.ts).
 */
export const url =
  (fallback: string | undefined, protocols: string[], check: UrlCheck = whatwgUrl): Parser<string> =>
  (raw) => {
    const value = raw ?? fallback;
    if (value === undefined) throw new Error('is required');
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(value)?.[0].toLowerCase();
    if (scheme === undefined) throw new Error(`is not a URL: ${redactUrl(value)}`);
    if (!protocols.includes(scheme)) throw new Error(`must use ${protocols.join(' or ')}`);
    try {
      check(value);
    } catch (e) {
      throw new Error(`is not a URL (${hidePasswordOf(value, (e as Error).message)}): ${redactUrl(value)}`);
    }
    return value;
  };

/** MONGO_URL: a standalone server, a replica set (`mongodb://u:p@h1:27017,h2:27017/db?replicaSet=rs`) or `mongodb+srv://`. */
export const mongoUrl: Parser<string> = url(undefined, ['mongodb:', 'mongodb+srv:'], mongoDriverUrl);

const amqpNode = url(undefined, ['amqp:', 'amqps:']);

/**
 * AMQP_URL, the local broker by default: one node's URL, or the URLs of a cluster's
 * nodes separated by commas (the client connects to the next when its node goes away).
 */
export const amqpUrl: Parser<string> = (raw, name) => {
  const value = raw ?? 'amqp://guest:guest@127.0.0.1:5672';
  return value
    .split(',')
    .map((node) => amqpNode(node.trim(), name))
    .join(',');
};

export const optionalUrl =
  (protocols: string[]): Parser<string | undefined> =>
  (raw, name) =>
    raw === undefined ? undefined : url(undefined, protocols)(raw, name);

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "1500", "1500ms", "30s", "5m", "2h", "1d" -> milliseconds. */
export function parseDuration(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(s.trim());
  if (!m) throw new Error(`is not a duration (a number of ms, or with ms/s/m/h/d): ${s}`);
  return Math.round(Number(m[1]) * UNIT_MS[m[2] ?? 'ms']);
}

export const duration =
  (fallback: string): Parser<number> =>
  (raw) =>
    parseDuration(raw ?? fallback);

/** How long records are kept before a purge: a duration (`30d`, `720h`) of a day at least. */
export const retention =
  (fallback: string): Parser<number> =>
  (raw) => {
    const ms = parseDuration(raw ?? fallback);
    if (ms < UNIT_MS.d) throw new Error(`must be a duration of at least 1d (e.g. 30d, 720h): ${raw}`);
    return ms;
  };

export const durationList =
  (fallback: string): Parser<number[]> =>
  (raw) =>
    (raw ?? fallback).split(',').map(parseDuration);

export const oneOf =
  <T extends string>(values: readonly T[], fallback: T): Parser<T> =>
  (raw) => {
    const v = (raw ?? fallback) as T;
    if (!values.includes(v)) throw new Error(`must be one of ${values.join(', ')}`);
    return v;
  };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The settings every server process of the platform reads (README, "Configuration"). */
export const platformSettings = (defaultPort: number) =>
  ({
    port: ['PORT', int(defaultPort, 0, 65535)],
    host: ['HOST', str('127.0.0.1')],
    mongoUrl: ['MONGO_URL', mongoUrl],
    dbPrefix: ['MONGO_DB_PREFIX', str('lpm_')],
    internalToken: ['INTERNAL_TOKEN', randomSecret(INTERNAL_TOKEN_BYTES)],
    logLevel: ['LOG_LEVEL', oneOf(LOG_LEVELS, 'info')],
  }) as const;

/** The settings of a process that uses Redis (createRedis; README, "Configuration"): its keys begin with the prefix. */
export const redisSettings = {
  redisUrl: ['REDIS_URL', url('redis://127.0.0.1:6379', ['redis:', 'rediss:'])],
  redisKeyPrefix: ['REDIS_KEY_PREFIX', str('lpm:')],
} as const;

/** The settings of a process that sends e-mail (createMailer; README, "Configuration"). */
export const mailSettings = {
  smtpUrl: ['SMTP_URL', optionalUrl(['smtp:', 'smtps:'])],
  mailFrom: ['MAIL_FROM', str('no-reply@localhost')],
} as const;
