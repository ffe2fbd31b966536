import type { Layer } from './layer';
import type { WorkspaceFiles } from './workspace-files';

// pom.xml (Maven) and build.gradle(.kts) / settings.gradle(.kts) (Gradle): which build tool a JVM project
// uses, the frameworks it names, and the gates that tool provides. Gates run offline: set-up resolved
// every plugin and dependency into the loop's Maven or Gradle cache (analysis/setup/infer-setup.ts), and
// gates have no network. The tests gate's per-test results come from the JUnit XML reports surefire,
// failsafe and Gradle write (activities/verification/jvm-test-reports.ts).

export type JvmBuildTool = 'maven' | 'gradle';

export interface JvmFacts {
  tool: JvmBuildTool;
  /** The build file the tool was recognised by. */
  manifest: string;
  /** Its text: enough to see which frameworks it names. */
  text: string;
  /** The repository's Gradle wrapper (`gradlew`), which the gates run instead of a `gradle` on the PATH. */
  wrapper: boolean;
}

const GRADLE_FILES = ['build.gradle.kts', 'build.gradle', 'settings.gradle.kts', 'settings.gradle'];

export async function readJvmFacts(files: WorkspaceFiles): Promise<JvmFacts | undefined> {
  const pom = await files.manifest('pom.xml');
  if (pom !== undefined) return { tool: 'maven', manifest: 'pom.xml', text: pom, wrapper: false };
  const gradle = await files.firstFile(GRADLE_FILES);
  if (gradle === undefined) return undefined;
  return {
    tool: 'gradle',
    manifest: gradle,
    text: (await files.manifest(gradle)) ?? '',
    wrapper: await files.isFile('gradlew'),
  };
}

/** The command a JVM project's gates and set-up start: Maven batch mode; Gradle without a daemon. */
export function jvmCommand(jvm: Pick<JvmFacts, 'tool' | 'wrapper'>): string[] {
  if (jvm.tool === 'maven') return ['mvn', '--batch-mode'];
  return [jvm.wrapper ? './gradlew' : 'gradle', '--no-daemon', '--console=plain'];
}

export function jvmInference(jvm: JvmFacts): Layer {
  const command = jvmCommand(jvm);
  if (jvm.tool === 'maven') {
    return {
      // `test` compiles main and test sources first; surefire writes a JUnit XML report per test class.
      tests: {
        argv: [...command, '--offline', 'test'],
        detail: 'pom.xml: mvn test, offline (surefire reports name every test)',
      },
      typecheck: {
        argv: [...command, '--offline', 'test-compile'],
        detail: 'pom.xml: mvn test-compile, offline (compiles main and test sources)',
      },
    };
  }
  return {
    tests: {
      argv: [...command, '--offline', 'test'],
      detail: `${jvm.manifest}: gradle test, offline (JUnit XML reports name every test)`,
    },
    typecheck: {
      argv: [...command, '--offline', 'testClasses'],
      detail: `${jvm.manifest}: gradle testClasses, offline (compiles main and test sources)`,
    },
  };
}

const JVM_SERVER_FRAMEWORKS = ['spring-boot-starter-web', 'spring-boot-starter-webflux', 'quarkus', 'micronaut-http'];

/** The server framework a JVM build file names, if any. */
export function jvmServerFramework(jvm: JvmFacts | undefined): string | undefined {
  return jvm ? JVM_SERVER_FRAMEWORKS.find((framework) => jvm.text.includes(framework)) : undefined;
}
