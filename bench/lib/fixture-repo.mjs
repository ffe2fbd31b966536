// Local git repositories the loops clone.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function commitAll(dir, files) {
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
  const git = (...args) =>
    execFileSync('git', ['-c', 'user.name=Fixture', '-c', 'user.email=fixture@example.invalid', ...args], {
      cwd: dir,
      stdio: 'pipe',
    });
  git('init', '--quiet', '--initial-branch=main');
  git('add', '--all');
  git('commit', '--quiet', '-m', 'fixture: initial');
  return dir;
}

/** A tiny Node project, the same shape as the tests' fixture (its `node --test` suite is a real gate). */
export function createNodeFixtureRepo(dir) {
  return commitAll(dir, {
    'package.json': JSON.stringify({ name: 'fixture', version: '1.0.0', scripts: { test: 'node --test' } }, null, 2),
    'src/sum.js': 'exports.sum = (a, b) => a - b;\n',
    'test/sum.test.js':
      "const test = require('node:test');\nconst assert = require('node:assert');\nconst { sum } = require('../src/sum');\ntest('sum adds two numbers', () => assert.strictEqual(sum(2, 3), 5));\n",
  });
}

/**
 * A repository with no manifest: no gate is inferred and nothing is installed, so a loop runs exactly
 * the fake maker and the fake gate the bench declares — the same steps the plain script runs.
 */
export function createPlainFixtureRepo(dir) {
  return commitAll(dir, { 'README.md': '# bench fixture\n', 'notes.txt': 'nothing to see\n' });
}
