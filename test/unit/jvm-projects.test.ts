import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { discoverGates } from '../../activities/verification/gate-discovery';
import { jvmAcceptanceTestsOnly } from '../../activities/verification/differential-run';
import {
  ARTIFACT_NOT_RESOLVED,
  environmentProblem,
  gateFailureReason,
} from '../../activities/verification/gate-outcome';
import { isJvmBuild, readJvmReports, removeJvmReports } from '../../activities/verification/jvm-test-reports';
import { instrumentTestsGate } from '../../activities/verification/test-reporter';
import { resolveSetupPlan } from '../../activities/setup/infer-setup';
import { operatorHint } from '../../activities/setup/operator-hints';
import { GRADLE_RESOLVE_TASK } from '../../analysis/setup/gradle-setup';
import { cacheEnvironment, CACHE_SUBDIRS } from '../../activities/sandbox/cache-layout';
import { egressEnvironment } from '../../activities/sandbox/egress-bridge';
import type { CommandResult } from '../../activities/process/run-command';
import { declarationLine } from '../../analysis/verification/frozen-test-findings';
import { namesTest, provenBy } from '../../analysis/verification/proven-criteria';
import { touchesSetupInputs } from '../../domain/setup';
import type { ResolvedGate } from '../../domain/gates';

// Java and Kotlin projects (issue 28): Maven and Gradle inference, set-up into the loop's caches, the
// JUnit XML reports surefire and Gradle write in every module, and the names Java people give a test.

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

async function repo(files: Record<string, string>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'jvm-'));
  dirs.push(dir);
  for (const [rel, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.writeFile(path.join(dir, rel), text);
  }
  return dir;
}

const POM = '<project><modelVersion>4.0.0</modelVersion><artifactId>x</artifactId></project>\n';

function report(cls: string, cases: Array<[string, 'pass' | 'fail' | 'skip']>): string {
  const body = cases
    .map(([name, outcome]) => {
      const inner = outcome === 'fail' ? '<failure message="no"/>' : outcome === 'skip' ? '<skipped/>' : '';
      return `  <testcase name="${name}" classname="${cls}" time="0.01">${inner}</testcase>`;
    })
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="${cls}" tests="${cases.length}">\n${body}\n</testsuite>\n`;
}

describe('gate discovery', () => {
  test('pom.xml: mvn test and test-compile, offline, in batch mode; a library unless it names a server framework', async () => {
    const plan = await discoverGates({ workspace: await repo({ 'pom.xml': POM }), contractGates: [] });
    expect(plan.gates.map((g) => [g.gate, g.argv, g.source])).toEqual([
      ['tests', ['mvn', '--batch-mode', '--offline', 'test'], 'manifest-inference'],
      ['typecheck', ['mvn', '--batch-mode', '--offline', 'test-compile'], 'manifest-inference'],
    ]);
    expect(plan.profile).toBe('library');
    const web = await discoverGates({
      workspace: await repo({ 'pom.xml': POM.replace('</project>', '<x>spring-boot-starter-web</x></project>') }),
      contractGates: [],
    });
    expect(web.profile).toBe('backend-api');
  });

  test('Gradle: the wrapper when the repository has one, else gradle; no daemon, offline', async () => {
    const wrapped = await discoverGates({
      workspace: await repo({ 'settings.gradle.kts': 'rootProject.name = "x"\n', gradlew: '#!/bin/sh\n' }),
      contractGates: [],
    });
    expect(wrapped.gates.map((g) => g.argv)).toEqual([
      ['./gradlew', '--no-daemon', '--console=plain', '--offline', 'test'],
      ['./gradlew', '--no-daemon', '--console=plain', '--offline', 'testClasses'],
    ]);
    const plain = await discoverGates({
      workspace: await repo({ 'build.gradle': 'plugins { id "java" }\n' }),
      contractGates: [],
    });
    expect(plain.gates[0]?.argv[0]).toBe('gradle');
  });
});

describe('set-up', () => {
  test('Maven resolves plugins, dependencies and the test provider by running surefire on no test', async () => {
    const plan = await resolveSetupPlan({ workspace: await repo({ 'pom.xml': POM }), searchPath: '/nonexistent' });
    expect(plan.commands.map((c) => c.argv)).toEqual([
      [
        'mvn',
        '--batch-mode',
        '--no-transfer-progress',
        'test',
        '-Dtest=*#engineeringLoopResolvesTheTestProvider',
        '-Dsurefire.failIfNoSpecifiedTests=false',
        '-DfailIfNoTests=false',
      ],
    ]);
    expect(plan.outputs).toContain('target/');
  });

  test('Gradle compiles the test classes and resolves what the test task needs, through an init script', async () => {
    const plan = await resolveSetupPlan({
      workspace: await repo({ 'build.gradle.kts': '' }),
      searchPath: '/nonexistent',
    });
    // The script and the init script are run by real Gradle in test/e2e/real-projects.e2e.test.ts.
    expect(plan.commands.map((c) => c.argv)).toEqual([
      [
        'sh',
        '-c',
        expect.stringContaining('"$@" --init-script "$init"'),
        'gradle-setup',
        expect.stringContaining(`tasks.create('${GRADLE_RESOLVE_TASK}')`),
        'gradle',
        '--no-daemon',
        '--console=plain',
        'testClasses',
        GRADLE_RESOLVE_TASK,
      ],
    ]);
    expect(plan.outputs).toEqual(['build/', '.gradle/']);
    const wrapped = await resolveSetupPlan({
      workspace: await repo({ 'settings.gradle': '', gradlew: '#!/bin/sh\n' }),
      searchPath: '/nonexistent',
    });
    expect(wrapped.commands[0]?.argv.slice(5, 6)).toEqual(['./gradlew']);
  });

  test("the loop's caches hold Maven's repository and Gradle's home; a networked JVM reaches the proxy", () => {
    expect(CACHE_SUBDIRS).toEqual(expect.arrayContaining(['maven', 'gradle']));
    expect(cacheEnvironment('/c/l')).toMatchObject({
      MAVEN_OPTS: '-Dmaven.repo.local=/c/l/maven',
      GRADLE_USER_HOME: '/c/l/gradle',
    });
    expect(egressEnvironment().JAVA_TOOL_OPTIONS).toBe(
      '-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 ' +
        '-Dhttp.nonProxyHosts=localhost|127.0.0.1',
    );
  });

  test('a changed build file sets the maker workspace up again', () => {
    expect(touchesSetupInputs(['core/pom.xml'])).toBe(true);
    expect(touchesSetupInputs(['build.gradle.kts'])).toBe(true);
    expect(touchesSetupInputs(['gradle/libs.versions.toml'])).toBe(true);
    expect(touchesSetupInputs(['src/main/java/Pom.java'])).toBe(false);
  });
});

describe('test reports', () => {
  test('every module’s surefire, failsafe and Gradle reports are read and merged; stale ones are removed first', async () => {
    const checkout = await repo({
      'pom.xml': POM,
      'target/surefire-reports/TEST-com.example.StaleTest.xml': report('com.example.StaleTest', [['forged', 'pass']]),
    });
    const gate: ResolvedGate = {
      gate: 'tests',
      argv: ['mvn', '--batch-mode', '--offline', 'test'],
      timeoutSeconds: 60,
      source: 'manifest-inference',
      detail: 'pom.xml',
    };
    const reportDir = await repo({});
    const instrumented = await instrumentTestsGate(gate, checkout, reportDir);
    expect(instrumented.argv).toEqual(gate.argv);
    // The maker's forged report is gone before the gate runs.
    expect(await readJvmReports(checkout, 'surefire')).toBeNull();

    // The run writes reports in two modules (one through failsafe) and a Gradle build.
    const write = async (rel: string, text: string) => {
      await fs.mkdir(path.dirname(path.join(checkout, rel)), { recursive: true });
      await fs.writeFile(path.join(checkout, rel), text);
    };
    await write(
      'core/target/surefire-reports/TEST-com.example.CalcTest.xml',
      report('com.example.CalcTest', [
        ['adds', 'pass'],
        ['divides', 'fail'],
      ]),
    );
    await write('core/target/surefire-reports/com.example.CalcTest.txt', 'not a report');
    await write(
      'app/target/failsafe-reports/TEST-com.example.AppIT.xml',
      report('com.example.AppIT', [['starts', 'skip']]),
    );
    await write(
      'lib/build/test-results/test/TEST-com.example.LibTest.xml',
      report('com.example.LibTest', [
        ['sums(int)[1]', 'pass'],
        ['rounds()', 'pass'],
      ]),
    );
    expect(await instrumented.read('')).toEqual({
      runner: 'surefire',
      passed: 3,
      failed: 1,
      skipped: 1,
      passedTests: [
        'com.example.CalcTest > adds',
        'com.example.LibTest > sums(int)[1]',
        'com.example.LibTest > rounds',
      ],
      failedTests: ['com.example.CalcTest > divides'],
    });
    await removeJvmReports(checkout);
    expect(await readJvmReports(checkout, 'surefire')).toBeNull();
  });

  test('which gates are Maven or Gradle builds', () => {
    expect(isJvmBuild(['mvn', 'test'])).toBe(true);
    expect(isJvmBuild(['./mvnw', 'verify'])).toBe(true);
    expect(isJvmBuild(['env', 'JAVA_OPTS=-Xmx1g', './gradlew', 'test'])).toBe(true);
    expect(isJvmBuild(['npm', 'test'])).toBe(false);
  });
});

describe('naming and proving a JVM test', () => {
  const reported = 'com.example.labels.LabelsTest > capitalisesTheName';

  test.each([
    'capitalisesTheName',
    'LabelsTest#capitalisesTheName',
    'LabelsTest.capitalisesTheName',
    'LabelsTest > capitalisesTheName',
    'labels.LabelsTest#capitalisesTheName',
    'com.example.labels.LabelsTest#capitalisesTheName',
    'com.example.labels.LabelsTest > capitalisesTheName',
  ])('%s names it', (wanted) => {
    expect(namesTest(reported, wanted)).toBe(true);
  });

  test.each(['OtherTest#capitalisesTheName', 'sTest#capitalisesTheName', 'LabelsTest#capitalises', 'Name'])(
    '%s does not',
    (wanted) => {
      expect(namesTest(reported, wanted)).toBe(false);
    },
  );

  test('a test class qualified in the contract is proven by that class’s test alone', () => {
    const criteria = [{ id: 'AC-1', statement: 's', verification: { type: 'test' as const, name: 'LabelsTest#adds' } }];
    const run = (passedTests: string[]) =>
      provenBy(
        'tests',
        { runner: 'surefire', passed: 1, failed: 0, skipped: 0, passedTests, failedTests: [] },
        criteria,
      );
    expect(run(['com.example.LabelsTest > adds'])).toEqual(['AC-1']);
    expect(run(['com.example.PricesTest > adds'])).toEqual([]);
  });

  test('a JVM test is located at its method, parameterised or not', () => {
    const text = [
      'class CalcTest {',
      '  @Test',
      '  void adds() {}',
      '  @ParameterizedTest',
      '  void sums(int n) {}',
      '}',
    ].join('\n');
    expect(declarationLine(text, 'com.example.CalcTest > adds')).toBe(3);
    expect(declarationLine(text, 'com.example.CalcTest > sums(int)[2]')).toBe(5);
  });
});

describe('offline builds and the differential run', () => {
  const run = (stdout: string): CommandResult =>
    ({
      argv: ['mvn', '--offline', 'test'],
      exitCode: 1,
      signal: null,
      limitsReached: [],
      stdout,
      stderr: '',
    }) as unknown as CommandResult;

  test('an artifact offline Maven lacks is the environment’s problem, not the code’s', () => {
    const missing =
      '[ERROR] Failed to execute goal … Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact org.apache.maven.surefire:surefire-junit4:jar:3.2.5 has not been downloaded from it before. -> [Help 1]';
    const reason = gateFailureReason('tests', run(missing), null);
    expect(reason).toBe(`${ARTIFACT_NOT_RESOLVED}org.apache.maven.surefire:surefire-junit4:jar:3.2.5`);
    expect(
      environmentProblem({
        argv: ['mvn', '--offline', 'test'],
        exitCode: 1,
        spawnError: null,
        stderr: '',
        missingArtifact: reason!.slice(ARTIFACT_NOT_RESOLVED.length),
      }),
    ).toBe(
      '`mvn --offline test` needs org.apache.maven.surefire:surefire-junit4:jar:3.2.5, which set-up did not put in the loop cache',
    );
    // A failing test is the code's.
    expect(gateFailureReason('tests', run('[ERROR] Tests run: 2, Failures: 1'), null)).toBe(
      '`mvn --offline test` exited with code 1',
    );
  });

  test('an artifact or a wrapper distribution offline Gradle lacks is the environment’s problem too', () => {
    const gradle = (stderr: string) =>
      gateFailureReason('tests', { ...run(''), argv: ['gradle', '--offline', 'test'], stderr }, null);
    // Gradle 4.4.1's words, for a module it has no metadata of and for a file of one it has.
    expect(
      gradle(
        "Could not resolve all files for configuration ':testRuntimeClasspath'.\n> Could not resolve org.slf4j:slf4j-simple:2.0.16.\n" +
          '   > No cached version of org.slf4j:slf4j-simple:2.0.16 available for offline mode.\n',
      ),
    ).toBe(`${ARTIFACT_NOT_RESOLVED}org.slf4j:slf4j-simple:2.0.16`);
    expect(
      gradle('> Could not download junit.jar (junit:junit:4.13.2): No cached version available for offline mode\n'),
    ).toBe(`${ARTIFACT_NOT_RESOLVED}junit:junit:4.13.2`);
    // The wrapper with no distribution in the loop cache (its URL on stdout, its stack trace on stderr).
    const wrapper = {
      ...run('Downloading https://services.gradle.org/distributions/gradle-8.10.2-bin.zip\n'),
      argv: ['./gradlew', '--offline', 'test'],
      stderr:
        'Exception in thread "main" java.net.UnknownHostException: services.gradle.org\n' +
        '\tat org.gradle.wrapper.Download.downloadInternal(Download.java:66)\n',
    };
    expect(gateFailureReason('tests', wrapper, null)).toBe(
      `${ARTIFACT_NOT_RESOLVED}https://services.gradle.org/distributions/gradle-8.10.2-bin.zip`,
    );
    // In set-up, where it has network, the escalation says what to let it reach.
    expect(operatorHint(`${wrapper.stdout}\n${wrapper.stderr}`)).toMatch(
      /^the repository's Gradle wrapper .* SANDBOX_EGRESS_SETUP/,
    );
    // A failing test is the code's.
    expect(gradle('2 tests completed, 1 failed\n> There were failing tests.')).toBe(
      '`gradle --offline test` exited with code 1',
    );
  });

  test('the differential run narrows Maven with surefire’s method filter and Gradle with its test filter', () => {
    const argv = ['mvn', '--batch-mode', '--offline', 'test'];
    expect(jvmAcceptanceTestsOnly(argv, ['CalcTest#adds', 'sums(int)[1]'])).toEqual([
      ...argv,
      '-Dtest=*#adds,*#sums',
      '-Dsurefire.failIfNoSpecifiedTests=false',
    ]);
    expect(jvmAcceptanceTestsOnly(argv, ['adds two numbers'])).toBeNull();
    // Gradle's filter is an option of the test task, so it follows `test`, whatever comes after.
    expect(
      jvmAcceptanceTestsOnly(['./gradlew', '--no-daemon', '--offline', 'test'], ['CalcTest.adds', 'sums[1]']),
    ).toEqual(['./gradlew', '--no-daemon', '--offline', 'test', '--tests', '*.adds', '--tests', '*.sums']);
    expect(jvmAcceptanceTestsOnly(['gradle', ':core:test', 'jacocoTestReport'], ['adds'])).toEqual([
      'gradle',
      ':core:test',
      '--tests',
      '*.adds',
      'jacocoTestReport',
    ]);
    expect(jvmAcceptanceTestsOnly(['gradle', 'check'], ['adds'])).toBeNull();
    expect(jvmAcceptanceTestsOnly(['npm', 'test'], ['adds'])).toBeNull();
  });
});
