// The JVM test frameworks' calls that check a thrown exception: JUnit 5's and TestNG's assertThrows,
// kotlin.test's assertFailsWith, Kotest's shouldThrow family. Shared by the Java/Kotlin test inventory
// (jvm-test-inventory.ts) and the assertion strengths (assertion-strength.ts).
export const JVM_THROW_CALLS: readonly string[] = [
  'assertThrows',
  'assertThrowsExactly',
  'expectThrows',
  'assertFailsWith',
  'assertFails',
  'shouldThrow',
  'shouldThrowExactly',
  'shouldThrowAny',
  'shouldThrowUnit',
  'shouldThrowExactlyUnit',
  'shouldThrowAnyUnit',
  'shouldThrowWithMessage',
];
