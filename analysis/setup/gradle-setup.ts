// Gradle's set-up: every dependency the offline gates (`test`, `testClasses`) need, in the loop's Gradle
// cache. `testClasses` resolves the compile classpaths only; what the test task alone needs — runtime-only
// dependencies (a JUnit Platform engine or launcher, a logging binding) and what plugins give it (JaCoCo's
// agent) — resolves only when tests run, and set-up must not run them (the base commit has a failing test).
// So an init script adds a task that resolves every test task's classpath, then every other resolvable
// configuration leniently (one that cannot resolve is no set-up failure; the gate names what it lacked).
//
// Gradle reads an init script only from a file, and set-up's arguments may not name a file outside the
// workspace: the command is a shell that writes the script to a temporary file (the sandbox's own /tmp),
// runs Gradle with it and removes it. Checked with Gradle 4.4.1, whose API is all the script uses; it also
// says that its task cannot be kept in a configuration cache (Gradle 7.4 and later).

/** The task the init script adds to every project. */
export const GRADLE_RESOLVE_TASK = 'engineeringLoopResolveDependencies';

const INIT_SCRIPT = [
  'allprojects {',
  `  def resolve = tasks.create('${GRADLE_RESOLVE_TASK}') {`,
  '    doLast {',
  '      project.tasks.withType(Test).each { it.classpath.files }',
  '      project.configurations.findAll { it.canBeResolved }.each { c ->',
  '        try { c.incoming.artifactView { lenient(true) }.files.files }',
  '        catch (e) { logger.warn("${c.name} not resolved: ${e.message}") }',
  '      }',
  '    }',
  '  }',
  "  try { resolve.notCompatibleWithConfigurationCache('it resolves configurations') } catch (MissingMethodException e) {}",
  '}',
].join('\n');

const WITH_INIT_SCRIPT =
  'init="$(mktemp)" && printf "%s\\n" "$1" > "$init" && shift && "$@" --init-script "$init"; status=$?; rm -f "$init"; exit "$status"';

/** `gradle` (the command a JVM project runs) compiling the test classes and resolving what the tests need. */
export function gradleSetupArgv(gradle: string[]): string[] {
  return ['sh', '-c', WITH_INIT_SCRIPT, 'gradle-setup', INIT_SCRIPT, ...gradle, 'testClasses', GRADLE_RESOLVE_TASK];
}
