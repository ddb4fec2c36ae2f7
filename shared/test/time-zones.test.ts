// Time zones as stored (their canonical name) and the formatters kept for them
// (time.ts, bounded-cache.ts): however many spellings callers send, a process keeps
// at most ZONE_FORMATTERS_KEPT formatters.
import { BoundedCache } from '../src/bounded-cache.ts';
import { ZONE_FORMATTERS_KEPT, canonicalTimeZone, dayIn, zonedMoment, zoneFormattersKept } from '../src/time.ts';

/** `zone` with each letter's case chosen by the bits of n: 2^letters spellings of one zone. */
const spelling = (zone: string, n: number) =>
  [...zone].map((c, i) => ((n >> i) & 1 ? c.toUpperCase() : c.toLowerCase())).join('');

describe('canonicalTimeZone', () => {
  it('when a zone is spelt in another case or by an alias, then its canonical name; a UTC offset or an unknown name is none', () => {
    expect(canonicalTimeZone('aMeRiCa/sao_paulo')).toBe('America/Sao_Paulo');
    expect(canonicalTimeZone('America/Sao_Paulo')).toBe('America/Sao_Paulo');
    expect(canonicalTimeZone('US/Eastern')).toBe('America/New_York');
    expect(canonicalTimeZone('+03:00')).toBeNull();
    expect(canonicalTimeZone('Mars/Olympus')).toBeNull();
  });
});

describe('the zone formatters', () => {
  it('when thousands of spellings of zones are used, then the formatters kept stay at the bound, and every answer is right', () => {
    const due = zonedMoment('2030-06-10', 'America/Sao_Paulo', '09:00');
    for (let n = 0; n < 3 * ZONE_FORMATTERS_KEPT; n++) {
      const zone = spelling('America/Sao_Paulo', n);
      expect(zonedMoment('2030-06-10', zone, '09:00')).toEqual(due);
      expect(dayIn(zone, due)).toBe('2030-06-10');
      expect(canonicalTimeZone(zone)).toBe('America/Sao_Paulo');
    }
    expect(zoneFormattersKept()).toBeLessThanOrEqual(ZONE_FORMATTERS_KEPT);
    expect(zoneFormattersKept()).toBeGreaterThan(ZONE_FORMATTERS_KEPT / 2);
  });
});

describe('BoundedCache', () => {
  it('when more keys than its bound are asked, then the least recently used is made again, and a failed make keeps nothing', () => {
    const made: string[] = [];
    const cache = new BoundedCache<string, string>(2);
    const get = (k: string) => cache.get(k, (key) => (made.push(key), key.toUpperCase()));
    expect([get('a'), get('b'), get('a'), get('c')]).toEqual(['A', 'B', 'A', 'C']);
    expect(cache.size).toBe(2);
    get('a'); // kept: used after b
    get('b'); // dropped for c, made again
    expect(made).toEqual(['a', 'b', 'c', 'b']);
    expect(() =>
      cache.get('x', () => {
        throw new RangeError('no');
      }),
    ).toThrow(RangeError);
    expect(cache.size).toBe(2);
  });
});
