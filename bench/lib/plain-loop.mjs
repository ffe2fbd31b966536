// The limit the service is measured against: a plain Node script doing the loop's real work itself —
// clone; per iteration the maker subprocess, git add + commit, the gate subprocess, the diff, one review
// call to the model (and the triage call the service also makes when the review found something).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { gateArgv, makerArgv } from './loop-body.mjs';

const run = promisify(execFile);
const git = (cwd, ...args) =>
  run('git', ['-c', 'user.name=Plain', '-c', 'user.email=plain@example.invalid', ...args], {
    cwd,
    maxBuffer: 64 * 1024 ** 2,
  });

async function chat(llmBaseUrl, messages) {
  const res = await fetch(`${llmBaseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench-key' },
    body: JSON.stringify({ model: 'bench-reviewer', messages }),
  });
  if (!res.ok) throw new Error(`the model answered ${res.status}`);
  return JSON.parse((await res.json()).choices[0].message.content);
}

/** Runs up to `maxIterations`; returns how many it took until the review was clean. */
export async function plainLoop({
  repo,
  workDir,
  llmBaseUrl,
  makerSeconds,
  gateSeconds,
  gateLogBytes = 0,
  maxIterations,
}) {
  const dir = path.join(workDir, 'clone');
  fs.rmSync(dir, { recursive: true, force: true });
  await run('git', ['clone', '--quiet', repo, dir]);
  const base = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
  for (let sequence = 1; sequence <= maxIterations; sequence++) {
    const [program, ...args] = makerArgv(makerSeconds);
    await run(program, args, { cwd: dir, env: { ...process.env, LOOP_SEQUENCE: String(sequence) } });
    await git(dir, 'add', '--all');
    await git(dir, 'commit', '--quiet', '-m', `iteration ${sequence}`);
    const [gate, ...gateArgs] = gateArgv(gateSeconds, gateLogBytes);
    await run(gate, gateArgs, { cwd: dir, maxBuffer: 2 * gateLogBytes + 1024 ** 2 });
    const diff = (await git(dir, 'diff', base, 'HEAD')).stdout;
    const review = await chat(llmBaseUrl, [
      { role: 'system', content: 'You review code changes.' },
      { role: 'user', content: `Review this change:\n${diff}` },
    ]);
    if (review.findings.length === 0) return sequence;
    await chat(llmBaseUrl, [
      { role: 'system', content: 'You triage code-review findings.' },
      { role: 'user', content: review.findings.map((f) => `## ${f.id} ${f.title}`).join('\n') },
    ]);
  }
  return maxIterations;
}
