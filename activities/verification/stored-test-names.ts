import { sanitise } from '../../domain/sanitise';

// The test names kept with a tests gate's evidence and served by the API: what proved an acceptance
// criterion and what failed, bounded however large the suite and however long a parametrised name.
// Names come from the repository's tests, so they are redacted like the output they were printed in.

export const MAX_STORED_TEST_NAMES = 500;
const MAX_NAME_LENGTH = 1000;

/** The first MAX_STORED_TEST_NAMES names, each cut to MAX_NAME_LENGTH characters and redacted. */
export function storedTestNames(names: string[]): string[] {
  return names.slice(0, MAX_STORED_TEST_NAMES).map(storedTestName);
}

/** One name as it is stored: cut to MAX_NAME_LENGTH characters and redacted. */
export function storedTestName(name: string): string {
  return sanitise(name.length > MAX_NAME_LENGTH ? `${name.slice(0, MAX_NAME_LENGTH)}…` : name);
}
