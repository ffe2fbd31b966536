// The files report-preload.ts writes into a tests gate's report directory, as text: they run inside the
// gate (its node and Python processes), not in the service. Each only adds reporters, or does nothing,
// and each writes to the directory it sits in, one file per runner invocation
// (`<runner>-<pid>-<ms>.<ext>`): an environment that passes NODE_OPTIONS on and nothing else (turbo's
// strict mode) still reaches it.

/**
 * Preloaded into every node process of the gate (NODE_OPTIONS=--require). By the process's entry
 * script: jest gets `--json --outputFile`, vitest a JUnit reporter, mocha the reporter below; the
 * `node --test` runner runs again with a JUnit reporter beside the spec one, since its reporters are
 * options node read before any preload ran. Every process also passes PYTHONPATH with the
 * sitecustomize below on to what it starts, so a pytest started by a script finds it.
 */
export const NODE_PRELOAD = String.raw`'use strict';
(() => {
  const fs = require('node:fs');
  const path = require('node:path');
  const dir = __dirname;
  const python = path.join(dir, 'python');
  const pythonPath = process.env.PYTHONPATH;
  if (!(pythonPath || '').split(path.delimiter).includes(python))
    process.env.PYTHONPATH = pythonPath ? python + path.delimiter + pythonPath : python;
  const file = (runner, ext) => path.join(dir, runner + '-' + process.pid + '-' + Date.now() + ext);
  const given = (words, ...flags) =>
    words.some((a) => flags.some((f) => a === f || a.startsWith(f + '=') || a.startsWith(f + '.')));

  // node --test: the runner's own process (its test files run in children with NODE_TEST_CONTEXT set).
  if (process.execArgv.includes('--test') && !process.env.NODE_TEST_CONTEXT) {
    const [major, minor] = process.versions.node.split('.').map(Number);
    const chosen = [...process.execArgv, ...(process.env.NODE_OPTIONS || '').split(/\s+/)];
    if (major < 20 || (major === 20 && minor < 8) || given(chosen, '--test-reporter', '--test-reporter-destination', '--watch'))
      return;
    const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout', '--test-reporter=junit', '--test-reporter-destination=' + file('node-test', '.xml')];
    const run = require('node:child_process').spawnSync(process.execPath, [...process.execArgv, ...reporters, ...process.argv.slice(1)], { stdio: 'inherit' });
    if (run.error) return;
    if (run.signal) process.kill(process.pid, run.signal);
    process.exit(run.status === null ? 1 : run.status);
  }

  if (!process.argv[1]) return;
  let entry;
  try {
    entry = fs.realpathSync(process.argv[1]);
  } catch {
    return;
  }
  const args = process.argv.slice(2);
  const has = (...flags) => given(args, ...flags);
  if (/[\\/]jest(?:-cli)?[\\/]bin[\\/]jest\.js$/.test(entry)) {
    if (has('--outputFile', '--output-file', '--listTests', '--showConfig', '--watch', '--watchAll')) return;
    process.argv.push(...(has('--json') ? [] : ['--json']), '--outputFile=' + file('jest', '.json'));
  } else if (/[\\/]vitest[\\/]vitest\.mjs$/.test(entry)) {
    if (has('--outputFile', '--output-file', '--watch') || ['watch', 'dev'].includes(args[0])) return;
    const report = file('vitest', '.xml');
    // vitest names a test's file relative to its root, by default the directory it runs in.
    try {
      if (!has('--root', '-r')) fs.writeFileSync(report + '.cwd', process.cwd());
    } catch {}
    process.argv.push(...(has('--reporter') ? [] : ['--reporter=default']), '--reporter=junit', '--outputFile.junit=' + report);
  } else if (/[\\/]mocha[\\/](?:bin[\\/](?:mocha(?:\.js)?|_mocha)|lib[\\/]cli[\\/]cli\.js)$/.test(entry)) {
    // bin/mocha.js hands these arguments on when it starts lib/cli/cli.js in a node of its own.
    if (has('--reporter', '-R', '--watch', '-w', '--list-reporters', '--list-interfaces') || args[0] === 'init') return;
    process.argv.push('--reporter', path.join(dir, 'mocha-reporter.cjs'));
  }
})();
`;

/**
 * mocha's reporter for the gate: the spec reporter for the output, and every test's file, titles and
 * outcome to a file when the run ends.
 */
export const MOCHA_REPORTER = String.raw`'use strict';
const fs = require('node:fs');
const path = require('node:path');

module.exports = function EngineeringLoopReporter(runner, options) {
  try {
    // The mocha that runs this reporter: the one its command's script belongs to.
    const mocha = require.resolve('mocha', { paths: [path.dirname(fs.realpathSync(process.argv[1]))] });
    new (require(mocha).reporters.Spec)(runner, options);
  } catch {}
  const tests = [];
  const record = (state) => (test) =>
    tests.push({
      file: typeof test.file === 'string' ? test.file : null,
      titlePath: typeof test.titlePath === 'function' ? test.titlePath() : [String(test.title)],
      state,
    });
  runner.on('pass', record('passed'));
  runner.on('fail', record('failed'));
  runner.on('pending', record('pending'));
  runner.once('end', () => {
    const file = path.join(__dirname, 'mocha-' + process.pid + '-' + Date.now() + '.json');
    fs.writeFileSync(file, JSON.stringify({ tests }));
  });
};
`;

/**
 * Found first on PYTHONPATH by every Python the gate starts: in pytest's own process it adds a JUnit
 * report through PYTEST_ADDOPTS, read as pytest starts (`-rA`, xunit1 names each testcase's file, as for a
 * pytest gate), unless the command chose its own; then it runs the sitecustomize it hides, if any.
 */
export const PYTHON_SITECUSTOMIZE = String.raw`import os
import sys


def _is_pytest(args):
    i = 0
    while i < len(args):
        word = args[i]
        if word == "-m":
            return i + 1 < len(args) and args[i + 1] in ("pytest", "py.test")
        if word in ("-c", "-"):
            return False
        if word in ("-X", "-W"):
            i += 2
            continue
        if word.startswith("-"):
            i += 1
            continue
        return os.path.basename(word) in ("pytest", "py.test")
    return False


def _add_report(here):
    args = list(getattr(sys, "orig_argv", []))[1:]
    if not _is_pytest(args):
        return
    import shlex
    import time

    addopts = os.environ.get("PYTEST_ADDOPTS", "")
    words = shlex.split(addopts) + args
    if any(w.startswith(("--junitxml", "--junit-xml")) for w in words) or "no:junitxml" in words:
        return
    report = os.path.join(os.path.dirname(here), "pytest-%d-%d.xml" % (os.getpid(), int(time.time() * 1000)))
    os.environ["PYTEST_ADDOPTS"] = " ".join(
        w for w in (addopts, "-rA", "--junitxml=" + shlex.quote(report), "-o junit_family=xunit1") if w
    )


def _run_hidden(here):
    import importlib.machinery
    import importlib.util

    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


_here = os.path.dirname(os.path.abspath(__file__))
try:
    _add_report(_here)
except Exception:
    pass
try:
    _run_hidden(_here)
except Exception:
    pass
`;
