// API key -> principal, behind the failed-authentication throttle of the client's
// address (AuthFailures): once an address is past its failures, its unknown keys
// are refused before any store lookup, for the rest of the window.
//
// Why valid keys keep working from a throttled address: an address is often shared
// (an office's NAT, a proxy not listed in TRUSTED_PROXIES), and one caller's bad keys
// must not lock its neighbours out. Only failures are counted, and a key this
// gateway has found within the last day (PrincipalCache.recentlyValid) skips the
// throttle and is looked up as usual: still at most one store query a second per
// key, and refused once revoked. Using that way round the throttle takes a valid
// key, so it gives an attacker nothing to guess with.
//
// Any other key is charged one failure before its lookup and given the point back
// when found (or when the store could not answer): a burst of concurrent bad keys
// cannot all slip under a count taken before any of them failed, so an address
// never causes more than the limit of lookups per window. Concurrent requests with
// one key from one address share that charge and lookup, so a client starting with
// many requests at once spends one point, not one per request. A valid key this
// gateway has not seen yet therefore passes while its address is under the limit,
// and from a throttled address waits for the window's end like any unknown key:
// telling it apart would take the very lookup the throttle saves.
import { serviceUnavailable } from '@lpm/shared/errors';
import type { Principal } from '../domain/accounts.ts';
import { keyDigest } from '../domain/keys.ts';
import type { AuthFailureDecision, AuthFailures } from '../limits/auth-failures.ts';
import type { PrincipalCache } from './principal-cache.ts';

export type Authentication =
  { principal: Principal } | { refused: 'Missing API key' | 'Invalid API key' } | { throttled: AuthFailureDecision };

const BEARER_RE = /^Bearer +(\S+)$/i;

export class Authenticator {
  private readonly principals: PrincipalCache;
  private readonly failures: AuthFailures;
  /** `<address> <key digest>` -> the charged lookup running for it. */
  private readonly running = new Map<string, Promise<Authentication>>();

  constructor(opts: { principals: PrincipalCache; failures: AuthFailures }) {
    this.principals = opts.principals;
    this.failures = opts.failures;
  }

  /**
   * Authenticates the Authorization header of a request from `address`; rejects with 503 when the store cannot answer.
   * A key found and still cached is answered at once, without a promise (most requests).
   */
  check(authorization: string | undefined, address: string): Authentication | Promise<Authentication> {
    const key = bearerKey(authorization);
    if (typeof key !== 'string') return this.chargedRefusal(key, address);
    // Hashed once per request: the cache is keyed by digest.
    const digest = keyDigest(key);
    const found = this.principals.found(digest);
    return found ? { principal: found } : this.lookedUp(key, digest, address);
  }

  private async chargedRefusal(
    refused: { refused: 'Missing API key' | 'Invalid API key' },
    address: string,
  ): Promise<Authentication> {
    const charge = await this.failures.charge(address);
    return charge.allowed ? refused : { throttled: charge };
  }

  private async lookedUp(key: string, digest: string, address: string): Promise<Authentication> {
    if (this.principals.recentlyValid(key, digest)) {
      const principal = await this.lookup(key, digest);
      return principal ? { principal } : { refused: 'Invalid API key' };
    }
    const id = `${address} ${digest}`;
    let running = this.running.get(id);
    if (!running) {
      running = this.chargedLookup(key, digest, address).finally(() => this.running.delete(id));
      this.running.set(id, running);
    }
    return running;
  }

  private async chargedLookup(key: string, digest: string, address: string): Promise<Authentication> {
    const charge = await this.failures.charge(address);
    if (!charge.allowed) return { throttled: charge };
    let principal: Principal | null;
    try {
      principal = await this.lookup(key, digest);
    } catch (e) {
      await this.failures.refund(address);
      throw e;
    }
    if (!principal) return { refused: 'Invalid API key' };
    await this.failures.refund(address);
    return { principal };
  }

  private async lookup(key: string, digest: string): Promise<Principal | null> {
    try {
      return await this.principals.get(key, digest);
    } catch (e) {
      throw serviceUnavailable('Service unavailable', { cause: e });
    }
  }
}

/** The Bearer key of an Authorization header, or why there is none. */
function bearerKey(header: string | undefined): string | { refused: 'Missing API key' | 'Invalid API key' } {
  if (header === undefined || header.trim() === '') return { refused: 'Missing API key' };
  const match = BEARER_RE.exec(header.trim());
  return match ? match[1] : { refused: 'Invalid API key' };
}
