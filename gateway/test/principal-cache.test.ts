import { describe, expect, test } from '@jest/globals';
import { PrincipalCache } from '../src/auth/principal-cache.ts';
import type { Principal } from '../src/domain/accounts.ts';

const principal = { team: { id: 'team_1' } } as unknown as Principal;

function setup(result: () => Promise<Principal | null>, maxEntries?: number) {
  let clock = 0;
  const calls: string[] = [];
  const cache = new PrincipalCache({
    lookup: (key) => {
      calls.push(key);
      return result();
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
});
