import { MAX_STORED_TEST_NAMES, storedTestNames } from '../../activities/verification/stored-test-names';

describe('test names stored with evidence', () => {
  it('keeps the first MAX_STORED_TEST_NAMES, cuts long names and redacts secrets in them', () => {
    const many = Array.from({ length: MAX_STORED_TEST_NAMES + 10 }, (_, i) => `test ${i}`);
    expect(storedTestNames(many)).toEqual(many.slice(0, MAX_STORED_TEST_NAMES));
    const [long] = storedTestNames([`test_param[${'x'.repeat(5000)}]`]);
    expect(long!.length).toBeLessThan(1100);
    expect(storedTestNames(['logs in with ghp_abcdefghijklmnopqrstuvwxyz0123456789'])[0]).not.toContain(
      'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
    );
  });
});
