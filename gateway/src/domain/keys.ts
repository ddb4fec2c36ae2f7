// API keys (`lpk_`) and webhooks portal session tokens (`lpp_`): the prefix and 40
// base62 characters; only their SHA-256 digest is ever stored.
import { hash, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_RE = /^lpk_[0-9A-Za-z]{40}$/;
const PORTAL_TOKEN_RE = /^lpp_[0-9A-Za-z]{40}$/;

function generateToken(prefix: string): string {
  let body = '';
  for (let i = 0; i < 40; i++) body += BASE62[randomInt(BASE62.length)];
  return `${prefix}${body}`;
}

export const generateApiKey = (): string => generateToken('lpk_');
export const generatePortalToken = (): string => generateToken('lpp_');

export const isWellFormedKey = (raw: string): boolean => KEY_RE.test(raw);
export const isPortalToken = (raw: string): boolean => PORTAL_TOKEN_RE.test(raw);

// One-shot: a Hash object per call would cost every request's authentication an allocation or two more.
export const keyDigest = (raw: string): string => hash('sha256', raw, 'hex');
