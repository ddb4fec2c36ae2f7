import { storableText } from '../src/text.ts';

describe('storableText', () => {
  test('when text holds NUL characters, then they are removed and the rest is kept in order', () => {
    expect(storableText('\0ok\0\0done\0')).toBe('okdone');
  });

  test('when text holds lone surrogates (high or low, at either end or reversed), then they are removed', () => {
    expect(storableText('a\uD800b')).toBe('ab');
    expect(storableText('\uDC00a')).toBe('a');
    expect(storableText('a\uD83D')).toBe('a');
    expect(storableText('\uDE00\uD83D')).toBe('');
  });

  test('when text has whole surrogate pairs and other characters, then it is given back unchanged', () => {
    const text = 'José 😀 {"ok":true} \u00e9\u0301 \t\r\n \u2028';
    expect(storableText(text)).toBe(text);
    expect(storableText('')).toBe('');
  });
});
