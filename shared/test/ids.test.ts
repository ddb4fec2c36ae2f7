import { isId, newId } from '../src/ids.ts';

test('when many ids are made, then each is a valid distinct id of its kind, time-ordered, whose random part uses every symbol', () => {
  const ids = Array.from({ length: 5000 }, () => newId('evt'));
  expect(ids.every((id) => isId('evt', id))).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
  const times = ids.map((id) => id.slice(4, 14));
  expect([...times].sort()).toEqual(times);
  const symbols = new Set(ids.flatMap((id) => [...id.slice(14)]));
  expect([...symbols].sort().join('')).toBe('0123456789abcdefghjkmnpqrstvwxyz');
});
