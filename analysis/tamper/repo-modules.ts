import path from 'node:path';
import { throughAliases, type PathAlias } from './path-aliases';
import { isTestFile } from './test-files';

// Whether a mock's target is the repository's own code at the checkpoint, not a third-party package:
// a relative JS specifier that resolves to a file, one the repository's path aliases turn into one
// (path-aliases.ts), or a Python dotted path whose leading segments name a module or package in the
// repository (from its root, `src/`, or the test's own directory).

const JS_EXTENSIONS = ['.ts', '.tsx', '.js', '.jsx', '.mjs', '.cjs', '.mts', '.cts'];

/** The repository file (or package directory) a mock target names; null when it is not the repository's. */
export function repositoryModule(
  target: string,
  testFile: string,
  files: ReadonlySet<string>,
  aliases: PathAlias[] = [],
): string | null {
  if (testFile.endsWith('.py')) return pythonModule(target, testFile, files);
  if (/\.(?:java|kt)$/.test(testFile)) return classUnderTest(target, testFile, files);
  if (!/^\.\.?(?:\/|$)/.test(target))
    return throughAliases(target, aliases).reduce<string | null>(
      (found, p) => found ?? javascriptModule(p, files),
      null,
    );
  const resolved = path.posix.join(path.posix.dirname(testFile), target);
  return resolved === '..' || resolved.startsWith('../') ? null : javascriptModule(resolved, files);
}

/** The file a repository path names as a module: itself, with an extension, or its directory's index. */
function javascriptModule(resolved: string, files: ReadonlySet<string>): string | null {
  // node16 imports name the compiled `.js` of a `.ts` file.
  const stem = resolved.replace(/\.[cm]?jsx?$/, '');
  const candidates = [
    resolved,
    ...JS_EXTENSIONS.map((e) => stem + e),
    ...JS_EXTENSIONS.map((e) => `${resolved}/index${e}`),
  ];
  return candidates.find((c) => files.has(c)) ?? null;
}

/**
 * Java and Kotlin: mocking a collaborator (`@Mock PaymentGateway gateway`) is how JVM unit tests are
 * written, so only a mock of the class the test is named for counts — `mock(Price.class)`,
 * `mockStatic(Price.class)`, `spy(new Price())`, `mockk<Price>()` in PriceTest — when that class is a
 * source file of the repository (src/main/java/…/Price.java, or Price.kt).
 */
function classUnderTest(target: string, testFile: string, files: ReadonlySet<string>): string | null {
  const tested = path.posix
    .basename(testFile)
    .replace(/\.(?:java|kt)$/, '')
    .replace(/(?:Tests?|IT|ITCase|TestCase|Spec)$/, '');
  const simple = target.split('.').pop()!.replace(/Kt$/, '');
  if (!tested || simple !== tested) return null;
  const suffix = target.includes('.') ? target.replace(/Kt$/, '').replace(/\./g, '/') : simple;
  for (const file of files) {
    const stem = file.replace(/\.(?:java|kt)$/, '');
    if (stem !== file && (stem === suffix || stem.endsWith(`/${suffix}`)) && !isTestFile(file)) return file;
  }
  return null;
}

/** `app.pricing.total` → app/pricing.py; `.pricing` (from a relative import) is looked up beside the test. */
function pythonModule(dotted: string, testFile: string, files: ReadonlySet<string>): string | null {
  const level = /^\.*/.exec(dotted)![0].length;
  const segments = dotted.slice(level).split('.').filter(Boolean);
  let here = path.posix.dirname(testFile);
  for (let up = 1; up < level; up++) here = path.posix.dirname(here);
  const roots = level ? [here] : ['.', 'src', here];
  for (const root of roots) {
    for (let k = segments.length; k >= 1; k--) {
      const base = path.posix.join(root, ...segments.slice(0, k));
      const found = [`${base}.py`, `${base}/__init__.py`].find((c) => files.has(c));
      if (found) return found;
      // A namespace package: a directory of modules without __init__.py.
      if ([...files].some((f) => f.startsWith(`${base}/`) && f.endsWith('.py'))) return `${base}/`;
    }
  }
  return null;
}
