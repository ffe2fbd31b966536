import path from 'node:path';
import { GRADLE_VIEW, POM_VIEW } from './build-file-views';
import type { BaseTree } from './config-references';
import { literalGlob, type GateEntrypoints } from './gate-entrypoints';

// The JVM build files a Maven or Gradle gate reads, from the base tree: every pom.xml (any module
// depth), the build.gradle(.kts) of every Gradle project — one that exists, or one a settings script
// includes, where a maker could add a script the build would then read — each outside its
// dependencies (build-file-views.ts), and the builds a settings script includes (`includeBuild`), whole.

const BUILD_SCRIPTS = ['build.gradle', 'build.gradle.kts'];
const SETTINGS_SCRIPTS = ['settings.gradle', 'settings.gradle.kts'];

export async function addJvmBuildFiles(entrypoints: GateEntrypoints, base: BaseTree): Promise<void> {
  const { tools, sections, files } = entrypoints;
  const maven = tools.get('mvn') ?? tools.get('mvnw');
  const gradle = tools.get('gradle') ?? tools.get('gradlew');
  const addSection = (file: string, view: string, reason: string) => {
    const key = `${file}#${view}`;
    if (!sections.has(key)) sections.set(key, reason);
  };
  if (maven) {
    for (const file of base.files) if (path.posix.basename(file) === 'pom.xml') addSection(file, POM_VIEW, maven);
  }
  if (!gradle) return;
  const projects = new Set(['.']);
  for (const file of base.files) {
    const name = path.posix.basename(file);
    const dir = path.posix.dirname(file);
    if (BUILD_SCRIPTS.includes(name)) projects.add(dir);
    if (!SETTINGS_SCRIPTS.includes(name)) continue;
    projects.add(dir);
    const settings = (await base.read(file)) ?? '';
    for (const project of includedProjects(settings)) projects.add(within(dir, project));
    for (const build of includedBuilds(settings)) {
      const at = within(dir, build);
      if (at !== '.' && !files.has(`${literalGlob(at)}/**`))
        files.set(`${literalGlob(at)}/**`, `${gradle}, through ${file} includeBuild`);
    }
  }
  for (const project of projects) {
    if (project.startsWith('..')) continue;
    for (const script of BUILD_SCRIPTS) addSection(path.posix.join(project, script), GRADLE_VIEW, gradle);
  }
}

/** `include(":core", ":api:rest")`, `include 'core'`: project paths as directories (`core`, `api/rest`). */
function includedProjects(settings: string): string[] {
  const found: string[] = [];
  for (const call of settings.matchAll(/\binclude\b\s*\(?([^)\n]*)/g)) {
    for (const name of call[1]!.matchAll(/["']:?([\w.:-]+)["']/g)) found.push(name[1]!.replace(/:/g, '/'));
  }
  return found;
}

/** `includeBuild("build-logic")`, `includeBuild '../shared'`. */
function includedBuilds(settings: string): string[] {
  return [...settings.matchAll(/\bincludeBuild\s*\(?\s*["']([^"'\n]+)["']/g)].map((m) => m[1]!);
}

function within(dir: string, relative: string): string {
  return path.posix.normalize(path.posix.join(dir, relative));
}
