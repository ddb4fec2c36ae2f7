import { derivedId, isId, newId } from '../src/ids.ts';

test('when many ids are made, then each is a valid distinct id of its kind, time-ordered, whose random part uses every symbol', () => {
  const ids = Array.from({ length: 5000 }, () => newId('evt'));
  expect(ids.every((id) => isId('evt', id))).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
  const times = ids.map((id) => id.slice(4, 14));
  expect([...times].sort()).toEqual(times);
  const symbols = new Set(ids.flatMap((id) => [...id.slice(14)]));
  expect([...symbols].sort().join('')).toBe('0123456789abcdefghjkmnpqrstvwxyz');
});

test('when an id is derived from a key, then the same key and instant give the same valid id, another key another, and it sorts by its instant', () => {
  const at = Date.UTC(2026, 10, 27, 12, 0, 0);
  const a = derivedId('dlv', at, 'wh_1:evt_1');
  expect(isId('dlv', a)).toBe(true);
  expect(derivedId('dlv', at, 'wh_1:evt_1')).toBe(a);
  expect(derivedId('dlv', at, 'wh_2:evt_1')).not.toBe(a);
  expect(derivedId('dlv', at + 1, 'wh_0:evt_0') > a).toBe(true);
  expect(newId('dlv').slice(4, 14) > a.slice(4, 14)).toBe(true);
});
