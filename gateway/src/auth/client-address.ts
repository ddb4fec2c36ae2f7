// The client's address as the ingress reports it (TRUSTED_PROXIES). X-Forwarded-For
// is read from the right, only through proxies trusted here; the client address is
// the nearest one not trusted. With nothing trusted (the default) it is the socket's
// address and a client's own X-Forwarded-For is ignored.
//
// This is Fastify's `trustProxy` (the same @fastify/proxy-addr walk its `req.ip` does).
// The gateway's Fastify instance comes from the shared createHttpApp, which does not
// take `trustProxy` yet; once it does, pass `trustProxyOption(trusted)` to it and use
// `req.ip` instead of clientAddress().
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyRequest } from 'fastify';

/** Addresses/CIDRs of the trusted proxies, or the number of trusted hops nearest the gateway. */
export type TrustedProxies = readonly string[] | number;

const MAX_HOPS = 10;

/** Parses TRUSTED_PROXIES: unset or empty (none), a hop count, or a comma-separated list of addresses, CIDRs or proxy-addr's names (loopback, linklocal, uniquelocal). */
export const trustedProxies = (raw: string | undefined): TrustedProxies => {
  const value = raw?.trim() ?? '';
  if (value === '') return [];
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > MAX_HOPS) throw new Error(`a hop count must be from 0 to ${MAX_HOPS}`);
    return hops;
  }
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of list) {
    try {
      proxyAddr.compile(entry);
    } catch {
      throw new Error(`is not an address, CIDR or hop count: ${entry}`);
    }
  }
  return list;
};

type Trust = (addr: string, hop: number) => boolean;

/** The setting as Fastify's `trustProxy` option; false when nothing is trusted. A hop count trusts that many nearest hops, whoever they are (Fastify refuses a bare number). */
export function trustProxyOption(trusted: TrustedProxies): Trust | string[] | false {
  if (typeof trusted === 'number') return trusted > 0 ? (_addr, hop) => hop < trusted : false;
  return trusted.length > 0 ? [...trusted] : false;
}

/** How a request's client address is read under the setting. */
export function clientAddress(trusted: TrustedProxies): (req: FastifyRequest) => string {
  const option = trustProxyOption(trusted);
  // Nothing trusted: Fastify's req.ip is the socket's address.
  if (option === false) return (req) => req.ip ?? 'unknown';
  const trust: Trust = typeof option === 'function' ? option : proxyAddr.compile(option);
  return (req) => {
    const addresses = proxyAddr.all(req.raw, trust);
    return addresses[addresses.length - 1] ?? 'unknown';
  };
}
