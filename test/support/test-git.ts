import { execFileSync } from 'node:child_process';

/** git in `dir` as a test's committer (no user configuration needed), its output as text. */
export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', ...args], {
    cwd: dir,
    encoding: 'utf8',
  });
}
