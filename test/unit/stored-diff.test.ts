import { storedDiff } from '../../store/iteration-diffs';

describe('storedDiff: what of an iteration’s diff is kept', () => {
  test('a diff within the limit is kept whole, with its size in bytes', () => {
    const diff = '+é\n';
    expect(storedDiff(diff, 4)).toEqual({ text: diff, bytes: 4, truncated: false });
  });

  test('a larger diff stops after the last whole line that fits, and says so', () => {
    const diff = '+aaa\n+bbb\n+ccc\n';
    expect(storedDiff(diff, 12)).toEqual({ text: '+aaa\n+bbb\n', bytes: 15, truncated: true });
  });

  test('a character cut at the limit is not kept in part', () => {
    // "+€" is 4 bytes; a limit of 8 cuts the second "€" after its first byte, inside an unfinished line.
    const stored = storedDiff('+€\n+€€\n', 8);
    expect(stored.text).toBe('+€\n');
    expect(stored.text).not.toContain('\uFFFD');
    expect(stored.truncated).toBe(true);
  });

  test('a single line longer than the limit keeps nothing rather than half a line', () => {
    expect(storedDiff('x'.repeat(20), 10)).toEqual({ text: '', bytes: 20, truncated: true });
  });
});
