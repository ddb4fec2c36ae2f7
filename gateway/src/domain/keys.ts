// API keys: `lpk_` + 40 base62 characters; only their SHA-256 digest is ever stored.
import { hash, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_RE = /^lpk_[0-9A-Za-z]{40}$/;

export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < 40; i++) body += BASE62[randomInt(BASE62.length)];
  return `lpk_${body}`;
}

export const isWellFormedKey = (raw: string): boolean => KEY_RE.test(raw);

// One-shot: a Hash object per call would cost every request's authentication an allocation or two more.
export const keyDigest = (raw: string): string => hash('sha256', raw, 'hex');
