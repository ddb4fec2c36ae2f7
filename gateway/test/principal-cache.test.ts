import { describe, expect, test } from '@jest/globals';
import { PrincipalCache } from '../src/auth/principal-cache.ts';
import { keyDigest } from '../src/domain/keys.ts';
import type { Principal } from '../src/domain/accounts.ts';
import type { ChangePoll } from '../src/auth/principal-changes.ts';

const principal = { team: { id: 'team_1' } } as unknown as Principal;

function setup(result: (key: string) => Promise<Principal | null>, maxEntries?: number) {
  let clock = 0;
  const calls: string[] = [];
  const cache = new PrincipalCache({
    lookup: (key) => {
      calls.push(key);
      return result(key);
    },
    ttlMs: 1000,
    maxEntries,
    now: () => clock,
  });
  return { cache, calls, advance: (ms: number) => (clock += ms) };
}

describe('PrincipalCache', () => {
  test('when one key is looked up concurrently, then the store is asked once', async () => {
    const { cache, calls } = setup(async () => principal);
    const got = await Promise.all(Array.from({ length: 20 }, () => cache.get('lpk_a')));
    expect(got.every((p) => p === principal)).toBe(true);
    expect(calls).toHaveLength(1);
  });

  test('when an entry is 1 s old, then the next lookup asks the store again (hits and misses alike)', async () => {
    let answer: Principal | null = principal;
    const { cache, calls, advance } = setup(async () => answer);
    expect(await cache.get('lpk_a')).toBe(principal);
    answer = null;
    advance(999);
    expect(await cache.get('lpk_a')).toBe(principal);
    advance(1);
    expect(await cache.get('lpk_a')).toBeNull();
    advance(500);
    expect(await cache.get('lpk_a')).toBeNull();
    expect(calls).toHaveLength(2);
  });

  test('when a key was found and its entry is servable, then found() gives its principal at once; otherwise nothing', async () => {
    let answer: Principal | null = principal;
    const { cache, calls, advance } = setup(async () => answer);
    const id = keyDigest('lpk_a');
    const lookup = cache.get('lpk_a');
    expect(cache.found(id)).toBeUndefined();
    await lookup;
    expect(cache.found(id)).toBe(principal);
    expect(cache.found(keyDigest('lpk_b'))).toBeUndefined();
    answer = null;
    advance(1000);
    expect(cache.found(id)).toBeUndefined();
    expect(await cache.get('lpk_a')).toBeNull();
    expect(cache.found(id)).toBeUndefined();
    expect(calls).toHaveLength(2);
  });

  test('when the lookup fails, then the failure is not cached', async () => {
    let fail = true;
    const { cache, calls } = setup(async () => {
      if (fail) throw new Error('store down');
      return principal;
    });
    await expect(cache.get('lpk_a')).rejects.toThrow('store down');
    fail = false;
    expect(await cache.get('lpk_a')).toBe(principal);
    expect(calls).toHaveLength(2);
  });

  test('when many distinct keys arrive, then the cache stays within its bound', async () => {
    const { cache, calls } = setup(async () => null, 3);
    for (const k of ['a', 'b', 'c', 'd', 'e']) await cache.get(`lpk_${k}`);
    await cache.get('lpk_e');
    await cache.get('lpk_a');
    expect(calls).toEqual(['lpk_a', 'lpk_b', 'lpk_c', 'lpk_d', 'lpk_e', 'lpk_a']);
  });

  test("when a team is forgotten, then its entries and lookups still running are dropped, other teams' kept", async () => {
    const other = { team: { id: 'team_2' } } as unknown as Principal;
    let release = () => {};
    const running = new Promise<Principal>((r) => (release = () => r(principal)));
    const calls: string[] = [];
    const answers: Record<string, () => Promise<Principal>> = {
      lpk_mine: async () => principal,
      lpk_other: async () => other,
      lpk_running: () => running,
    };
    const cache = new PrincipalCache({ lookup: (key) => (calls.push(key), answers[key]()), ttlMs: 1000 });
    await cache.get('lpk_mine');
    await cache.get('lpk_other');
    const pending = cache.get('lpk_running');
    cache.forgetTeam('team_1');
    release();
    await pending;
    for (const key of ['lpk_mine', 'lpk_other', 'lpk_running']) await cache.get(key);
    expect(calls).toEqual(['lpk_mine', 'lpk_other', 'lpk_running', 'lpk_mine', 'lpk_running']);
  });

  test('when a flood of distinct unknown keys arrives, then a key found stays cached and is not looked up again', async () => {
    const { cache, calls } = setup(async (key) => (key === 'lpk_good' ? principal : null), 3);
    expect(await cache.get('lpk_good')).toBe(principal);
    for (let i = 0; i < 1000; i++) expect(await cache.get(`lpk_bad${i}`)).toBeNull();
    expect(await cache.get('lpk_good')).toBe(principal);
    expect(calls.filter((k) => k === 'lpk_good')).toHaveLength(1);
    // The unknown keys are bounded on their own: the oldest were dropped, the newest kept.
    await cache.get('lpk_bad0');
    await cache.get('lpk_bad999');
    expect(calls.filter((k) => k === 'lpk_bad0')).toHaveLength(2);
    expect(calls.filter((k) => k === 'lpk_bad999')).toHaveLength(1);
  });

  test('when the flood arrives while a good key is still being looked up, then the key is cached once found', async () => {
    let release = () => {};
    const running = new Promise<Principal>((r) => (release = () => r(principal)));
    const { cache, calls } = setup((key) => (key === 'lpk_good' ? running : Promise.resolve(null)), 3);
    const pending = cache.get('lpk_good');
    for (let i = 0; i < 100; i++) await cache.get(`lpk_bad${i}`);
    release();
    expect(await pending).toBe(principal);
    expect(await cache.get('lpk_good')).toBe(principal);
    expect(calls.filter((k) => k === 'lpk_good')).toHaveLength(1);
  });

  test('when a key is unknown, then it is asked again after 1 s and works once it exists', async () => {
    let exists = false;
    const { cache, calls, advance } = setup(async () => (exists ? principal : null));
    expect(await cache.get('lpk_new')).toBeNull();
    exists = true;
    advance(1000);
    expect(await cache.get('lpk_new')).toBe(principal);
    expect(calls).toHaveLength(2);
  });

  test('when a key was found within a day, then it is recently valid even after its entry expired; unknown, revoked or older keys are not', async () => {
    let valid = true;
    const { cache, advance } = setup(async (key) => (key === 'lpk_good' && valid ? principal : null));
    expect(cache.recentlyValid('lpk_good')).toBe(false);
    await cache.get('lpk_good');
    await cache.get('lpk_bad');
    advance(60_000);
    expect(cache.recentlyValid('lpk_good')).toBe(true);
    expect(cache.recentlyValid('lpk_bad')).toBe(false);
    await cache.get('lpk_good');
    advance(86_400_000 - 1);
    expect(cache.recentlyValid('lpk_good')).toBe(true);
    advance(1);
    expect(cache.recentlyValid('lpk_good')).toBe(false);
    await cache.get('lpk_good');
    expect(cache.recentlyValid('lpk_good')).toBe(true);
    valid = false;
    advance(1000);
    expect(await cache.get('lpk_good')).toBeNull();
    expect(cache.recentlyValid('lpk_good')).toBe(false);
  });

  describe('past its TTL, a key found is served while the change counter holds', () => {
    function watched() {
      let clock = 0;
      const changes: { latest: ChangePoll | undefined } = { latest: { version: 7, startedAt: 0 } };
      const calls: string[] = [];
      let answer: Principal | null = principal;
      const cache = new PrincipalCache({
        lookup: async (key) => (calls.push(key), answer),
        ttlMs: 1000,
        changes,
        now: () => clock,
      });
      return {
        cache,
        calls,
        changes,
        at: (ms: number) => (clock = ms),
        /** The clock moves to `ms`, where a poll starts and reads the counter at `version`. */
        pollAt: (ms: number, version: number) => {
          clock = ms;
          changes.latest = { version, startedAt: ms };
        },
        revoke: () => (answer = null),
      };
    }

    test('when polls keep reading the counter the entry was looked up under, then the key is served without another lookup', async () => {
      const { cache, calls, pollAt } = watched();
      expect(await cache.get('lpk_a')).toBe(principal);
      for (let ms = 250; ms <= 5000; ms += 250) {
        pollAt(ms, 7);
        expect(await cache.get('lpk_a')).toBe(principal);
      }
      expect(calls).toHaveLength(1);
      expect(cache.recentlyValid('lpk_a')).toBe(true);
    });

    test('when a poll reads another counter (a key revoked, a plan changed), then the key is looked up again', async () => {
      const { cache, calls, pollAt, revoke } = watched();
      await cache.get('lpk_a');
      pollAt(3000, 7);
      revoke();
      pollAt(3100, 8);
      expect(await cache.get('lpk_a')).toBeNull();
      expect(calls).toHaveLength(2);
    });

    test('when the counter has held for a minute since the lookup, then the key is looked up again all the same', async () => {
      const { cache, calls, pollAt } = watched();
      await cache.get('lpk_a');
      pollAt(59_999, 7);
      await cache.get('lpk_a');
      expect(calls).toHaveLength(1);
      pollAt(60_000, 7);
      await cache.get('lpk_a');
      expect(calls).toHaveLength(2);
    });

    test('when the polls stop answering, then the entry lasts until the last answered poll started a TTL ago', async () => {
      const { cache, calls, at, pollAt } = watched();
      await cache.get('lpk_a');
      pollAt(2000, 7);
      at(2999);
      expect(await cache.get('lpk_a')).toBe(principal);
      expect(calls).toHaveLength(1);
      at(3000);
      await cache.get('lpk_a');
      expect(calls).toHaveLength(2);
    });

    test('when the lookup started before any poll answered, then the entry lasts its TTL only', async () => {
      const { cache, calls, changes, pollAt } = watched();
      changes.latest = undefined;
      await cache.get('lpk_a');
      pollAt(1000, 0);
      await cache.get('lpk_a');
      expect(calls).toHaveLength(2);
    });
  });
});
