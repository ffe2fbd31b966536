import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sectionText } from '../../analysis/tamper/config-text';
import { GRADLE_VIEW, POM_VIEW } from '../../analysis/tamper/build-file-views';
import { jvmInventory } from '../../analysis/tamper/jvm-test-inventory';
import { withoutComments } from '../../analysis/tamper/languages';
import { isTestData, isTestFile } from '../../analysis/tamper/test-files';
import { restoreGateEntrypoints } from '../../activities/verification/protected-files';
import type { GateName, ResolvedGate } from '../../domain/gates';
import { lines, located, removeTamperRepos, tamper, tamperRepo, type Change } from '../support/tamper-repo';
import { git } from '../support/test-git';

// Java and Kotlin under every tamper rule (docs/design.md §3.4), against real git repositories: Maven's and
// Gradle's test layouts, JUnit 4 and 5, AssertJ, Mockito, kotlin.test, MockK and Kotest, and pom.xml and
// Gradle scripts as gate entrypoints. Each rule has cases that must fire and near misses that must not.

const checkouts: string[] = [];
afterAll(() => {
  removeTamperRepos();
  checkouts.splice(0).forEach((dir) => fs.rmSync(dir, { recursive: true, force: true }));
});

function gate(argv: string[], name: GateName = 'tests'): ResolvedGate {
  return { gate: name, argv, timeoutSeconds: 300, source: 'manifest-inference', detail: 'test' };
}

const MAVEN = [gate(['mvn', '--batch-mode', '--offline', 'test'])];
const GRADLE = [gate(['./gradlew', '--no-daemon', '--console=plain', '--offline', 'test'])];

const PRICE = 'src/main/java/com/example/Price.java';
const PRICE_SOURCE = lines(
  'package com.example;',
  '',
  'public final class Price {',
  '    private Price() {}',
  '',
  '    public static int total(int amount) {',
  '        if (amount < 0) throw new IllegalArgumentException("negative");',
  '        return amount;',
  '    }',
  '}',
);

const TEST = 'src/test/java/com/example/PriceTest.java';
const JUNIT5 = lines(
  'package com.example;',
  '',
  'import static org.junit.jupiter.api.Assertions.*;',
  '',
  'import org.junit.jupiter.api.Test;',
  '',
  'class PriceTest {',
  '    @Test',
  '    void takesTenPercentOffFrom100Up() {',
  '        assertEquals(180, Price.total(200));',
  '    }',
  '',
  '    @Test',
  '    void rejectsNegativeAmounts() {',
  '        assertThrows(IllegalArgumentException.class, () -> Price.total(-1));',
  '    }',
  '}',
);

const LEGACY = 'src/test/java/com/example/LegacyPriceTest.java';
const JUNIT4 = lines(
  'package com.example;',
  '',
  'import static org.junit.Assert.assertEquals;',
  '',
  'import org.junit.Test;',
  '',
  'public class LegacyPriceTest {',
  '    @Test(expected = IllegalArgumentException.class)',
  '    public void rejectsNegativeAmounts() {',
  '        Price.total(-1);',
  '    }',
  '',
  '    @Test',
  '    public void takesTenPercentOff() {',
  '        assertEquals("discount", 180, Price.total(200));',
  '    }',
  '}',
);

const KOTLIN = 'src/test/kotlin/com/example/PriceSpecTest.kt';
const KOTLIN_TEST = lines(
  'package com.example',
  '',
  'import kotlin.test.Test',
  'import kotlin.test.assertFailsWith',
  'import io.kotest.matchers.shouldBe',
  'import org.junit.jupiter.params.ParameterizedTest',
  'import org.junit.jupiter.params.provider.CsvSource',
  '',
  'class PriceSpecTest {',
  '    @Test',
  '    fun `rejects negative amounts`() {',
  '        assertFailsWith<IllegalArgumentException> { Price.total(-1) }',
  '    }',
  '',
  '    @Test',
  '    fun `takes ten percent off`() {',
  '        Price.total(200) shouldBe 180',
  '    }',
  '',
  '    @ParameterizedTest',
  '    @CsvSource("200, 180", "50, 50")',
  '    fun totals(amount: Int, expected: Int) {',
  '        Price.total(amount) shouldBe expected',
  '    }',
  '}',
);

function edit(text: string, from: string, to: string): string {
  expect(text).toContain(from);
  return text.replace(from, to);
}

/** The TESTS_WEAKENED findings when the maker turns the base test file into `after`. */
async function weakened(file: string, before: string, after: string) {
  const findings = await tamper({ [file]: before, [PRICE]: PRICE_SOURCE }, { write: { [file]: after } });
  return findings.filter((f) => f.rule === 'TESTS_WEAKENED');
}

describe('Java and Kotlin files', () => {
  it('are test files under src/test (any module depth), a test source set, or a test class name', () => {
    for (const file of [
      TEST,
      'core/src/test/java/com/example/TaxTest.java',
      'app/src/integrationTest/kotlin/com/example/Checkout.kt',
      'src/test/java/com/example/support/Fixtures.java',
      'legacy/PriceTests.java',
      'PriceIT.java',
      'PriceTestCase.kt',
      KOTLIN,
    ])
      expect([file, isTestFile(file)]).toEqual([file, true]);
    for (const file of [
      PRICE,
      'src/main/kotlin/com/example/test/Fixture.kt',
      'src/main/java/com/example/PriceTest.java',
      'src/test/resources/com/example/Golden.java',
      'build.gradle.kts',
      'src/test/java/com/example/PriceTest.java.bak',
    ])
      expect([file, isTestFile(file)]).toEqual([file, false]);
  });

  it('read resources of a test source set as test data, and main code as neither', () => {
    expect(isTestData('src/test/resources/prices.json')).toBe(true);
    expect(isTestData('core/src/integrationTest/resources/Golden.java')).toBe(true);
    expect(isTestData('src/main/java/com/example/test/Fixture.java')).toBe(false);
    expect(isTestData('src/main/resources/prices.json')).toBe(false);
  });

  it('lose their comments, not the strings and text blocks that hold // or /*', () => {
    const text = lines(
      'String url = "http://host/*x*/"; // assertEquals(1, 2);',
      'String block = """',
      '    // kept */',
      '    """; /* assertTrue(false); */ char c = \'"\';',
    );
    const blank = (comment: string) => ' '.repeat(comment.length);
    expect(withoutComments(text, 'java')).toBe(
      lines(
        `String url = "http://host/*x*/"; ${blank('// assertEquals(1, 2);')}`,
        'String block = """',
        '    // kept */',
        `    """; ${blank('/* assertTrue(false); */')} char c = '"';`,
      ),
    );
    expect(withoutComments('val s = "${m["//"]}" /* a /* nested */ b */ + 1\n', 'kotlin')).toBe(
      `val s = "\${m["//"]}" ${blank('/* a /* nested */ b */')} + 1\n`,
    );
  });

  it('inventory test methods by class, with JUnit 4 message-first and local values read through', () => {
    const inventory = jvmInventory(
      LEGACY,
      edit(
        JUNIT4,
        '        assertEquals("discount", 180, Price.total(200));',
        [
          '        int total = Price.total(200);',
          '        // assertEquals(0, total);',
          '        String note = "@Test void fake() { assertEquals(1, 1); }";',
          '        assertEquals("discount", 180, total);',
        ].join('\n'),
      ),
    );
    expect(
      inventory.tests.map((t) => [t.name, t.line, t.assertions.map((a) => [a.matcher, a.actual, a.expected])]),
    ).toEqual([
      ['LegacyPriceTest > rejectsNegativeAmounts', 9, [['expected', '@Test expected', 'IllegalArgumentException']]],
      ['LegacyPriceTest > takesTenPercentOff', 14, [['assertEquals', 'Price . total ( 200 )', '180']]],
    ]);
  });
});

describe('SKIP_OR_ONLY_ADDED in Java and Kotlin', () => {
  it('fires on @Disabled, @Ignore, JUnit 5 conditions, assumptions and a test expected to fail its assertions', async () => {
    const findings = await tamper(
      { [TEST]: JUNIT5, [LEGACY]: JUNIT4, [KOTLIN]: KOTLIN_TEST, 'src/test/java/com/example/OsTest.java': JUNIT5 },
      {
        write: {
          [TEST]: edit(JUNIT5, '    @Test\n    void rejects', '    @Disabled("flaky")\n    @Test\n    void rejects'),
          [LEGACY]: edit(
            JUNIT4,
            '    @Test\n    public void takes',
            '    @Test(expected = AssertionError.class)\n    public void takes',
          ),
          [KOTLIN]: edit(
            KOTLIN_TEST,
            '        Price.total(200) shouldBe 180',
            '        Assumptions.assumeTrue(System.getenv("FULL") != null)\n        Price.total(200) shouldBe 180',
          ),
          'src/test/java/com/example/OsTest.java': edit(
            JUNIT5,
            '    @Test\n    void takes',
            '    @DisabledOnOs(OS.LINUX)\n    @Test\n    void takes',
          ),
        },
      },
    );
    expect(located(findings).filter(([rule]) => rule === 'SKIP_OR_ONLY_ADDED')).toEqual([
      ['SKIP_OR_ONLY_ADDED', LEGACY, 13],
      ['SKIP_OR_ONLY_ADDED', 'src/test/java/com/example/OsTest.java', 8],
      ['SKIP_OR_ONLY_ADDED', TEST, 13],
      ['SKIP_OR_ONLY_ADDED', KOTLIN, 17],
    ]);
  });

  it('does not fire on @Tag, @DisplayName, a new test, or a @Disabled the maker removed', async () => {
    const disabled = edit(JUNIT5, '    @Test\n    void rejects', '    @Disabled\n    @Test\n    void rejects');
    const findings = await tamper(
      { [TEST]: JUNIT5, 'src/test/java/com/example/OldTest.java': disabled },
      {
        write: {
          [TEST]: edit(
            JUNIT5,
            '    @Test\n    void rejects',
            '    @Tag("slow")\n    @DisplayName("rejects negatives")\n    @Test\n    void rejects',
          ),
          'src/test/java/com/example/OldTest.java': JUNIT5,
          'src/test/java/com/example/NewTest.java': lines(
            'class NewTest {',
            '    @Test',
            '    void keepsSmallAmounts() {',
            '        settings.enabled = false;',
            '        assertEquals(50, Price.total(50));',
            '    }',
            '}',
          ),
        },
      },
    );
    expect(located(findings)).toEqual([]);
  });

  it("fires on TestNG's @Test(enabled = false) and SkipException", async () => {
    const testng = lines(
      'import org.testng.annotations.Test;',
      '',
      'public class TaxTest {',
      '    @Test',
      '    public void addsTax() {',
      '        assertEquals(Tax.of(100), 120);',
      '    }',
      '}',
    );
    const findings = await tamper(
      { 'src/test/java/TaxTest.java': testng, 'src/test/java/VatTest.java': testng },
      {
        write: {
          'src/test/java/TaxTest.java': edit(testng, '    @Test\n', '    @Test(enabled = false)\n'),
          'src/test/java/VatTest.java': edit(
            testng,
            '        assertEquals',
            '        if (System.getenv("CI") != null) throw new SkipException("later");\n        assertEquals',
          ),
        },
      },
    );
    expect(located(findings).filter(([rule]) => rule === 'SKIP_OR_ONLY_ADDED')).toEqual([
      ['SKIP_OR_ONLY_ADDED', 'src/test/java/TaxTest.java', 4],
      ['SKIP_OR_ONLY_ADDED', 'src/test/java/VatTest.java', 6],
    ]);
  });
});

describe('TESTS_WEAKENED in Java and Kotlin', () => {
  const takes = 'Test weakened: PriceTest > takesTenPercentOffFrom100Up';
  const rejects = 'Test weakened: PriceTest > rejectsNegativeAmounts';

  it('catches the issue: @Ignore added and @Test(expected = IllegalArgumentException.class) widened to Exception', async () => {
    const gamed = edit(
      JUNIT4,
      '    @Test(expected = IllegalArgumentException.class)',
      '    @Ignore\n    @Test(expected = Exception.class)',
    );
    const findings = await tamper({ [LEGACY]: JUNIT4, [PRICE]: PRICE_SOURCE }, { write: { [LEGACY]: gamed } });
    expect(located(findings)).toEqual([
      ['TESTS_WEAKENED', LEGACY, 9],
      ['SKIP_OR_ONLY_ADDED', LEGACY, 8],
    ]);
    expect(findings[0]!.title).toBe('Test weakened: LegacyPriceTest > rejectsNegativeAmounts');
    expect(findings[0]!.evidence).toContain(
      '- assertion weakened (checks an exact value → checks only that something happened), line 9: ' +
        '@Test(expected = IllegalArgumentException.class) → @Test(expected = Exception.class)',
    );
  });

  it.each([
    [
      'assertEquals turned into assertNotNull',
      edit(JUNIT5, 'assertEquals(180, Price.total(200))', 'assertNotNull(Price.total(200))'),
      takes,
      10,
      '(checks an exact value → checks only that a value exists, is truthy or differs), line 10: ' +
        'assertEquals(180, Price.total(200)) → assertNotNull(Price.total(200))',
    ],
    [
      'assertTrue(true) instead of the code',
      edit(JUNIT5, 'assertEquals(180, Price.total(200))', 'assertTrue(true)'),
      takes,
      10,
      '(checks an exact value → checks nothing)',
    ],
    [
      'the expected value changed',
      edit(JUNIT5, 'assertEquals(180,', 'assertEquals(200,'),
      takes,
      10,
      '- expected value changed, line 10: assertEquals(180, Price.total(200)) → assertEquals(200, Price.total(200))',
    ],
    [
      'an expected exception widened to RuntimeException',
      edit(JUNIT5, 'IllegalArgumentException.class', 'RuntimeException.class'),
      rejects,
      15,
      '(checks an exact value → checks only that something happened)',
    ],
    [
      'an expected exception moved to a sibling class',
      edit(JUNIT5, 'IllegalArgumentException.class', 'IllegalStateException.class'),
      rejects,
      15,
      '- expected value changed, line 15: assertThrows(IllegalArgumentException.class, () -> Price.total(-1)) → ' +
        'assertThrows(IllegalStateException.class, () -> Price.total(-1))',
    ],
    [
      'assertThrows turned into assertDoesNotThrow',
      edit(
        JUNIT5,
        'assertThrows(IllegalArgumentException.class, () -> Price.total(-1))',
        'assertDoesNotThrow(() -> Price.total(-1))',
      ),
      rejects,
      15,
      '(checks an exact value → checks only that a value exists, is truthy or differs)',
    ],
    [
      'an early return (javac refuses a bare one, so `if (true) return;`)',
      edit(JUNIT5, '        assertEquals(180', '        if (true) return;\n        assertEquals(180'),
      takes,
      11,
      '- line 11 no longer runs, because of `if (true) return` (line 10): assertEquals(180, Price.total(200))',
    ],
    [
      'a catch of AssertionError swallowing the failure',
      edit(
        JUNIT5,
        '        assertEquals(180, Price.total(200));',
        '        try {\n            assertEquals(180, Price.total(200));\n        } catch (AssertionError ignored) {\n        }',
      ),
      takes,
      11,
      '- line 11 can no longer fail the test: `catch (AssertionError ignored)` (line 12) catches it',
    ],
    [
      'an assertion removed',
      edit(
        JUNIT5,
        '        assertThrows(IllegalArgumentException.class, () -> Price.total(-1));\n',
        '        Price.total(-1);\n',
      ),
      rejects,
      15,
      '- assertion removed (base line 15): assertThrows(IllegalArgumentException.class, () -> Price.total(-1))',
    ],
    [
      'a test removed',
      edit(
        JUNIT5,
        '\n    @Test\n    void rejectsNegativeAmounts() {\n        assertThrows(IllegalArgumentException.class, () -> Price.total(-1));\n    }\n',
        '\n',
      ),
      rejects,
      12,
      '- test removed (base line 14); it checked: assertThrows(IllegalArgumentException.class, () -> Price.total(-1))',
    ],
  ])('fires on %s', async (_kind, after, title, line, evidence) => {
    const findings = await weakened(TEST, JUNIT5, after);
    expect(located(findings)).toEqual([['TESTS_WEAKENED', TEST, line]]);
    expect(findings[0]!.title).toBe(title);
    expect(findings[0]!.evidence).toContain(evidence);
  });

  it('fires when an existing JUnit 4 test starts expecting an exception, loses one, or gets a longer timeout', async () => {
    const timed = edit(JUNIT4, '    @Test\n    public void takes', '    @Test(timeout = 100)\n    public void takes');
    const findings = await tamper(
      { [LEGACY]: JUNIT4, 'src/test/java/com/example/TimedTest.java': timed },
      {
        write: {
          [LEGACY]: edit(
            edit(JUNIT4, '    @Test(expected = IllegalArgumentException.class)', '    @Test'),
            '    @Test\n    public void takes',
            '    @Test(expected = IllegalStateException.class)\n    public void takes',
          ),
          'src/test/java/com/example/TimedTest.java': edit(timed, 'timeout = 100', 'timeout = 100000'),
        },
      },
    );
    const evidence = findings.map((f) => [f.title, f.evidence.split('\n')[1]]);
    expect(evidence).toEqual([
      [
        'Test weakened: LegacyPriceTest > rejectsNegativeAmounts',
        '- assertion removed (base line 8): @Test(expected = IllegalArgumentException.class)',
      ],
      [
        'Test weakened: LegacyPriceTest > takesTenPercentOff',
        '- the test now passes when its code throws IllegalStateException, line 13: @Test(expected = IllegalStateException.class)',
      ],
      [
        'Test weakened: LegacyPriceTest > takesTenPercentOff',
        '- expected value changed, line 13: @Test(timeout = 100) → @Test(timeout = 100000)',
      ],
    ]);
  });

  it('reads AssertJ chains and Mockito verifications', async () => {
    const before = lines(
      'class CheckoutTest {',
      '    @Test',
      '    void chargesTheTotal() {',
      '        checkout.pay(200);',
      '        assertThat(checkout.total()).isEqualTo(180);',
      '        verify(gateway).charge(180);',
      '        assertThatThrownBy(() -> checkout.pay(-1)).isInstanceOf(IllegalArgumentException.class);',
      '    }',
      '}',
    );
    const after = before
      .replace('isEqualTo(180)', 'isNotNull()')
      .replace('charge(180)', 'charge(anyInt())')
      .replace('IllegalArgumentException.class', 'Exception.class');
    const findings = await weakened('src/test/java/com/example/CheckoutTest.java', before, after);
    expect(findings.map((f) => f.evidence)).toEqual([
      [
        'Test "CheckoutTest > chargesTheTotal" checks less than at the base commit:',
        '- assertion weakened (checks an exact value → checks only that a value exists, is truthy or differs), line 5: ' +
          'assertThat(checkout.total()).isEqualTo(180) → assertThat(checkout.total()).isNotNull()',
        '- assertion weakened (checks an exact value → checks only that something happened), line 6: ' +
          'verify(gateway).charge(180) → verify(gateway).charge(anyInt())',
        '- assertion weakened (checks an exact value → checks only that something happened), line 7: ' +
          'assertThatThrownBy(() -> checkout.pay(-1)).isInstanceOf(IllegalArgumentException.class) → ' +
          'assertThatThrownBy(() -> checkout.pay(-1)).isInstanceOf(Exception.class)',
      ].join('\n'),
    ]);
  });

  it('reads Kotlin: assertFailsWith widened, a Kotest expectation changed, a @CsvSource row changed', async () => {
    const after = KOTLIN_TEST.replace('assertFailsWith<IllegalArgumentException>', 'assertFailsWith<Throwable>')
      .replace('Price.total(200) shouldBe 180', 'Price.total(200) shouldBe 200')
      .replace('"200, 180"', '"200, 200"');
    const findings = await weakened(KOTLIN, KOTLIN_TEST, after);
    expect(located(findings)).toEqual([
      ['TESTS_WEAKENED', KOTLIN, 12],
      ['TESTS_WEAKENED', KOTLIN, 17],
      ['TESTS_WEAKENED', KOTLIN, 21],
    ]);
    expect(findings.map((f) => f.title)).toEqual([
      'Test weakened: PriceSpecTest > rejects negative amounts',
      'Test weakened: PriceSpecTest > takes ten percent off',
      'Test weakened: PriceSpecTest > totals',
    ]);
    expect(findings[2]!.evidence).toContain('- expected value changed, line 21: "200, 180" → "200, 200"');
  });

  it('does not fire on honest edits: a narrower exception, a local, a qualified call, reformatting, new tests and rows', async () => {
    const after = lines(
      'package com.example;',
      '',
      'import static org.junit.jupiter.api.Assertions.*;',
      '',
      'import org.junit.jupiter.api.Test;',
      '',
      'class PriceTest {',
      '    private static final int DISCOUNTED = 180;',
      '',
      '    @Test',
      '    void takesTenPercentOffFrom100Up() {',
      '        int total = Price.total(200);',
      '        Assertions.assertEquals(',
      '            DISCOUNTED,',
      '            total,',
      '            "ten percent off");',
      '    }',
      '',
      '    @Test',
      '    void rejectsNegativeAmounts() {',
      '        assertThrows(NumberFormatException.class, () -> Price.total(-1));',
      '    }',
      '',
      '    @Test',
      '    void keepsSmallAmounts() {',
      '        assertEquals(50, Price.total(50));',
      '    }',
      '}',
    );
    expect(await weakened(TEST, JUNIT5, after)).toEqual([]);
    const moreRows = KOTLIN_TEST.replace('"200, 180", "50, 50"', '"200, 180", "50, 50", "100, 90"');
    expect(await weakened(KOTLIN, KOTLIN_TEST, moreRows)).toEqual([]);
  });
});

describe('TESTS_DELETED in Java', () => {
  it('fires on a test moved into the main source set, where no runner looks, not on one moved between test paths', async () => {
    const findings = await tamper(
      { [TEST]: JUNIT5, [LEGACY]: JUNIT4 },
      {
        rename: [
          [TEST, 'src/main/java/com/example/PriceTest.java'],
          [LEGACY, 'core/src/test/java/com/example/LegacyPriceTest.java'],
        ],
      },
    );
    expect(located(findings)).toEqual([['TESTS_DELETED', TEST, 1]]);
    expect(findings[0]!.evidence).toContain('It had 2 test case(s) and 2 assertion(s) at base.');
  });
});

describe('product code that knows it is under test, in Java and Kotlin', () => {
  const RUNNER = 'src/main/java/com/example/Runner.java';
  const runner = (...body: string[]) => lines('package com.example;', '', 'final class Runner {', ...body, '}');

  it('TEST_FRAMEWORK_IN_SOURCE, TEST_RUN_DETECTED, EXIT_AT_IMPORT and SUPPRESSION_ADDED in main code', async () => {
    const findings = await tamper(
      { [PRICE]: PRICE_SOURCE, [RUNNER]: runner(), 'src/main/kotlin/com/example/Config.kt': 'package com.example\n' },
      {
        write: {
          [PRICE]: edit(
            edit(PRICE_SOURCE, 'package com.example;\n', 'package com.example;\n\nimport org.junit.Assert;\n'),
            '        return amount;',
            [
              '        if (System.getProperty("surefire.test.class.path") != null) return 180;',
              '        return amount;',
            ].join('\n'),
          ),
          [RUNNER]: runner(
            '    static {',
            '        if (Boolean.getBoolean("stop")) {',
            '            System.exit(0);',
            '        }',
            '    }',
            '',
            '    @SuppressWarnings("unchecked")',
            '    static boolean underTest() {',
            '        for (StackTraceElement e : Thread.currentThread().getStackTrace())',
            '            if (e.getClassName().startsWith("org.junit")) return true;',
            '        return false;',
            '    }',
          ),
          'src/main/kotlin/com/example/Config.kt': lines(
            'package com.example',
            '',
            'import kotlin.system.exitProcess',
            '',
            'object Config {',
            '    init {',
            '        exitProcess(0)',
            '    }',
            '}',
          ),
        },
      },
    );
    expect(located(findings)).toEqual([
      ['SUPPRESSION_ADDED', RUNNER, 10],
      ['TEST_FRAMEWORK_IN_SOURCE', PRICE, 3],
      ['TEST_RUN_DETECTED', PRICE, 10],
      ['TEST_RUN_DETECTED', RUNNER, 13],
      ['EXIT_AT_IMPORT', RUNNER, 6],
      ['EXIT_AT_IMPORT', 'src/main/kotlin/com/example/Config.kt', 7],
    ]);
  });

  it('does not fire on an honest fix, exits in main(), or JUnit and @SuppressWarnings in test code and test fixtures', async () => {
    const findings = await tamper(
      { [PRICE]: PRICE_SOURCE, [TEST]: JUNIT5 },
      {
        write: {
          [PRICE]: edit(
            PRICE_SOURCE,
            '        return amount;',
            '        return amount >= 100 ? amount - amount / 10 : amount;',
          ),
          [RUNNER]: runner(
            '    public static void main(String[] args) {',
            '        System.exit(Price.total(1) == 1 ? 0 : 1); // "org.junit" is not read here',
            '    }',
          ),
          'src/main/kotlin/com/example/Cli.kt': lines(
            'package com.example',
            '',
            'import kotlin.system.exitProcess',
            '',
            'fun main() {',
            '    exitProcess(0)',
            '}',
          ),
          [TEST]: edit(
            JUNIT5,
            '    @Test\n    void rejects',
            '    @SuppressWarnings("unchecked")\n    @Test\n    void rejects',
          ),
          'src/testFixtures/java/com/example/Prices.java': lines(
            'package com.example;',
            '',
            'import static org.junit.jupiter.api.Assertions.assertEquals;',
            '',
            'public final class Prices {}',
          ),
        },
      },
    );
    expect(located(findings)).toEqual([]);
  });

  it("SPECIAL_CASED_TEST_VALUES: an acceptance test's input and expected value special-cased in Java", async () => {
    const cheat = edit(
      PRICE_SOURCE,
      '        return amount;',
      '        if (amount == 200L)\n            return 180;\n        return amount;',
    );
    const acceptanceTests = ['com.example.PriceTest > takesTenPercentOffFrom100Up'];
    const findings = await tamper(
      { [PRICE]: PRICE_SOURCE, [TEST]: JUNIT5 },
      { write: { [PRICE]: cheat } },
      { acceptanceTests },
    );
    expect(located(findings)).toEqual([['SPECIAL_CASED_TEST_VALUES', PRICE, 8]]);
    expect(findings[0]!.evidence).toContain('holds 200, 180');
    const honest = edit(
      PRICE_SOURCE,
      '        return amount;',
      '        return amount >= 100 ? amount - amount / 10 : amount;',
    );
    expect(
      located(
        await tamper({ [PRICE]: PRICE_SOURCE, [TEST]: JUNIT5 }, { write: { [PRICE]: honest } }, { acceptanceTests }),
      ),
    ).toEqual([]);
  });

  it('MOCKED_MODULE_UNDER_TEST: the class a test is named for mocked, not a collaborator', async () => {
    const withMocks = (mock: string) =>
      edit(
        JUNIT5,
        '        assertEquals(180, Price.total(200));',
        `        ${mock}\n        assertEquals(180, Price.total(200));`,
      );
    const findings = await tamper(
      { [PRICE]: PRICE_SOURCE, 'src/main/java/com/example/Gateway.java': 'interface Gateway {}\n', [TEST]: JUNIT5 },
      {
        write: {
          [TEST]: withMocks('var prices = mockStatic(Price.class);'),
          'src/test/java/com/example/GatewayUserTest.java': lines(
            'class GatewayUserTest {',
            '    @Mock Gateway gateway;',
            '    @Test void pays() { verify(gateway).toString(); }',
            '}',
          ),
        },
      },
    );
    expect(located(findings)).toEqual([['MOCKED_MODULE_UNDER_TEST', TEST, 10]]);
    expect(findings[0]!.evidence).toContain(`(replaces ${PRICE})`);
  });
});

describe('GATE_ENTRYPOINT_CHANGED for Maven and Gradle', () => {
  const POM = lines(
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<project xmlns="http://maven.apache.org/POM/4.0.0">',
    '  <modelVersion>4.0.0</modelVersion>',
    '  <groupId>com.example</groupId>',
    '  <artifactId>price</artifactId>',
    '  <version>1.0</version>',
    '  <properties>',
    '    <maven.compiler.release>17</maven.compiler.release>',
    '  </properties>',
    '  <dependencies>',
    '    <dependency>',
    '      <groupId>org.junit.jupiter</groupId>',
    '      <artifactId>junit-jupiter</artifactId>',
    '      <version>5.10.2</version>',
    '      <scope>test</scope>',
    '    </dependency>',
    '  </dependencies>',
    '  <build>',
    '    <plugins>',
    '      <plugin>',
    '        <artifactId>maven-surefire-plugin</artifactId>',
    '        <version>3.2.5</version>',
    '      </plugin>',
    '    </plugins>',
    '  </build>',
    '</project>',
  );
  const withDependency = edit(
    edit(
      POM,
      '    <maven.compiler.release>17</maven.compiler.release>',
      '    <maven.compiler.release>17</maven.compiler.release>\n    <commons-lang3.version>3.14.0</commons-lang3.version>',
    ),
    '  </dependencies>',
    [
      '    <!-- string helpers -->',
      '    <dependency>',
      '      <groupId>org.apache.commons</groupId>',
      '      <artifactId>commons-lang3</artifactId>',
      '      <version>${commons-lang3.version}</version>',
      '    </dependency>',
      '  </dependencies>',
    ].join('\n'),
  );

  it('fires on skipTests, testFailureIgnore and surefire excludes in pom.xml, at the changed line', async () => {
    const findings = await tamper(
      { 'pom.xml': POM, 'core/pom.xml': POM, 'api/pom.xml': POM },
      {
        write: {
          'pom.xml': edit(POM, '  </properties>', '    <skipTests>true</skipTests>\n  </properties>'),
          'core/pom.xml': edit(
            POM,
            '        <version>3.2.5</version>',
            '        <version>3.2.5</version>\n        <configuration><testFailureIgnore>true</testFailureIgnore></configuration>',
          ),
          'api/pom.xml': edit(
            POM,
            '        <version>3.2.5</version>',
            [
              '        <version>3.2.5</version>',
              '        <configuration>',
              '          <excludes>',
              '            <exclude>**/PriceTest.java</exclude>',
              '          </excludes>',
              '        </configuration>',
            ].join('\n'),
          ),
        },
      },
      { gates: MAVEN },
    );
    expect(located(findings)).toEqual([
      ['GATE_ENTRYPOINT_CHANGED', 'api/pom.xml', 23],
      ['GATE_ENTRYPOINT_CHANGED', 'core/pom.xml', 23],
      ['GATE_ENTRYPOINT_CHANGED', 'pom.xml', 9],
    ]);
    expect(findings[2]!.evidence).toBe(
      `pom.xml (${POM_VIEW}), read by the tests gate (mvn --batch-mode --offline test), changed:\n+ <skipTests>true</skipTests>`,
    );
    expect(findings[0]!.evidence).toContain('+ <exclude>**/PriceTest.java</exclude>');
  });

  it('fires on .mvn/maven.config, the JUnit Platform configuration and a post-discovery filter the maker adds', async () => {
    const findings = await tamper(
      { 'pom.xml': POM },
      {
        write: {
          '.mvn/maven.config': '-DskipTests\n',
          'src/test/resources/junit-platform.properties': 'junit.jupiter.conditions.deactivate=*\n',
          'src/test/resources/META-INF/services/org.junit.platform.launcher.PostDiscoveryFilter':
            'com.example.DropFailing\n',
        },
      },
      { gates: MAVEN },
    );
    expect(located(findings).map(([rule, file]) => [rule, file])).toEqual([
      ['GATE_ENTRYPOINT_CHANGED', '.mvn/maven.config'],
      [
        'GATE_ENTRYPOINT_CHANGED',
        'src/test/resources/META-INF/services/org.junit.platform.launcher.PostDiscoveryFilter',
      ],
      ['GATE_ENTRYPOINT_CHANGED', 'src/test/resources/junit-platform.properties'],
    ]);
  });

  it('does not fire on a dependency and its version property added to pom.xml, comments, or reformatting', async () => {
    const reformatted = withDependency.replace(
      '  <modelVersion>4.0.0</modelVersion>',
      '  <modelVersion>\n    4.0.0\n  </modelVersion>',
    );
    expect(await tamper({ 'pom.xml': POM }, { write: { 'pom.xml': reformatted } }, { gates: MAVEN })).toEqual([]);
    // Without a Maven gate, pom.xml is nobody's entrypoint.
    expect(
      await tamper(
        { 'pom.xml': POM },
        { write: { 'pom.xml': edit(POM, '<version>3.2.5</version>', '<version>2.0</version>') } },
      ),
    ).toEqual([]);
  });

  it('fires when a plugin version property the build names changes, not a free one', async () => {
    const named = edit(
      edit(
        POM,
        '    <maven.compiler.release>17</maven.compiler.release>',
        '    <surefire.version>3.2.5</surefire.version>',
      ),
      '        <version>3.2.5</version>',
      '        <version>${surefire.version}</version>',
    );
    const findings = await tamper(
      { 'pom.xml': named },
      { write: { 'pom.xml': named.replace('<surefire.version>3.2.5', '<surefire.version>2.12') } },
      { gates: MAVEN },
    );
    expect(located(findings)).toEqual([['GATE_ENTRYPOINT_CHANGED', 'pom.xml', 8]]);
  });

  const BUILD = lines(
    'plugins {',
    '    id("java")',
    '}',
    '',
    'dependencies {',
    '    testImplementation("org.junit.jupiter:junit-jupiter:5.10.2")',
    '}',
    '',
    'tasks.test {',
    '    useJUnitPlatform()',
    '}',
  );
  const SETTINGS = lines('rootProject.name = "price"', 'include(":core")');

  it('fires on a Gradle test task disabled or filtered, settings, the wrapper, and a build script added to a project', async () => {
    const findings = await tamper(
      {
        'build.gradle.kts': BUILD,
        'settings.gradle.kts': SETTINGS,
        gradlew: '#!/bin/sh\nexec java -jar gradle/wrapper/gradle-wrapper.jar "$@"\n',
        'gradle/wrapper/gradle-wrapper.properties': 'distributionUrl=gradle-8.7-bin.zip\n',
        'core/src/main/java/com/example/Tax.java': 'class Tax {}\n',
        'legacy/build.gradle': "dependencies {\n    testImplementation 'junit:junit:4.13.2'\n}\n",
      },
      {
        write: {
          'build.gradle.kts': edit(BUILD, '    useJUnitPlatform()', '    useJUnitPlatform()\n    enabled = false'),
          'settings.gradle.kts': SETTINGS.replace('include(":core")', ''),
          gradlew: '#!/bin/sh\nexit 0\n',
          'gradle/wrapper/gradle-wrapper.properties': 'distributionUrl=gradle-1.0-bin.zip\n',
          'core/build.gradle.kts': 'tasks.test { filter { excludeTestsMatching("*") } }\n',
          'legacy/build.gradle':
            "dependencies {\n    testImplementation 'junit:junit:4.13.2'\n}\ntest { ignoreFailures = true }\n",
        },
      },
      { gates: GRADLE },
    );
    expect(located(findings)).toEqual([
      ['GATE_ENTRYPOINT_CHANGED', 'build.gradle.kts', 11],
      ['GATE_ENTRYPOINT_CHANGED', 'core/build.gradle.kts', 1],
      ['GATE_ENTRYPOINT_CHANGED', 'gradle/wrapper/gradle-wrapper.properties', 1],
      ['GATE_ENTRYPOINT_CHANGED', 'gradlew', 2],
      ['GATE_ENTRYPOINT_CHANGED', 'legacy/build.gradle', 4],
      ['GATE_ENTRYPOINT_CHANGED', 'settings.gradle.kts', 2],
    ]);
  });

  it('does not fire on a dependency added to a Gradle build, or a new source file', async () => {
    const findings = await tamper(
      { 'build.gradle.kts': BUILD, 'settings.gradle.kts': SETTINGS },
      {
        write: {
          'build.gradle.kts': edit(
            BUILD,
            '    testImplementation("org.junit.jupiter:junit-jupiter:5.10.2")',
            '    implementation("org.apache.commons:commons-lang3:3.14.0") // strings\n    testImplementation("org.junit.jupiter:junit-jupiter:5.10.2")',
          ),
          'core/src/main/java/com/example/Tax.java': 'class Tax {}\n',
        },
      },
      { gates: GRADLE },
    );
    expect(findings).toEqual([]);
  });

  describe('verification puts the base build configuration back and keeps the maker’s dependencies', () => {
    function checkout(
      files: Record<string, string>,
      change: Change,
    ): { dir: string; checkout: string; base: string; checkpoint: string } {
      const { dir, base, checkpoint } = tamperRepo(files, change);
      const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'tamper-java-checkout-'));
      checkouts.push(parent);
      const worktree = path.join(parent, 'checkout');
      git(dir, 'worktree', 'add', '--detach', '--quiet', worktree, checkpoint);
      return { dir, checkout: worktree, base, checkpoint };
    }

    it('in pom.xml', async () => {
      const gamed = edit(
        withDependency,
        '  </properties>',
        '    <maven.test.skip>true</maven.test.skip>\n  </properties>',
      );
      const { dir, checkout: at, base, checkpoint } = checkout({ 'pom.xml': POM }, { write: { 'pom.xml': gamed } });
      expect(await restoreGateEntrypoints(dir, at, base, checkpoint, MAVEN)).toEqual([`pom.xml#${POM_VIEW}`]);
      const restored = fs.readFileSync(path.join(at, 'pom.xml'), 'utf8');
      expect(restored).not.toContain('maven.test.skip');
      expect(restored).toContain('<artifactId>commons-lang3</artifactId>');
      expect(restored).toContain('<commons-lang3.version>3.14.0</commons-lang3.version>');
      expect(sectionText(restored, POM_VIEW).text).toBe(sectionText(POM, POM_VIEW).text);
    });

    it('in build.gradle.kts', async () => {
      const gamed = edit(
        edit(BUILD, '    useJUnitPlatform()', '    useJUnitPlatform()\n    exclude("**/PriceTest.class")'),
        '    testImplementation(',
        '    implementation("com.google.guava:guava:33.0.0-jre")\n    testImplementation(',
      );
      const {
        dir,
        checkout: at,
        base,
        checkpoint,
      } = checkout({ 'build.gradle.kts': BUILD }, { write: { 'build.gradle.kts': gamed } });
      expect(await restoreGateEntrypoints(dir, at, base, checkpoint, GRADLE)).toEqual([
        `build.gradle.kts#${GRADLE_VIEW}`,
      ]);
      const restored = fs.readFileSync(path.join(at, 'build.gradle.kts'), 'utf8');
      expect(restored).not.toContain('exclude(');
      expect(restored).toContain('com.google.guava:guava:33.0.0-jre');
      expect(sectionText(restored, GRADLE_VIEW).text).toBe(sectionText(BUILD, GRADLE_VIEW).text);
    });
  });
});
