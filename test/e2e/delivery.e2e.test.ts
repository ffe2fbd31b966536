import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_API_POLICY } from '../../api/deps';
import { LoopPullRequestKey } from '../../workflows/search-attributes';
import { cleanLedger } from '../support/fake-llm-server';
import { startFakeForgeServer, type FakeForgeServer } from '../support/fake-forge-server';
import { commitFiles, CORRECT_SUM, createBareOrigin, createFixtureRepo, scriptedMaker } from '../support/fixture-repo';
import { recordHistory } from '../support/histories';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// Delivery end to end: a loop cloned from a bare "origin" pushes its branch back there when it passes,
// opens a draft pull request on a local server speaking GitHub's wire format with a credential named in
// the request (the secret only ever on the worker), and serves its change as a patch.

const SECRET = 'ghs_e2eDeliverySecret0123456789abcdefABCDEF';
const CREDENTIAL = 'fake-github';

let h: LoopHarness;
let forge: FakeForgeServer;
beforeAll(async () => {
  forge = await startFakeForgeServer();
  h = await startLoopHarness({
    workerEnv: {
      GIT_CREDENTIALS: JSON.stringify({
        [CREDENTIAL]: {
          username: 'x-access-token',
          password: SECRET,
          hosts: ['github.example'],
          apiBaseUrl: forge.baseUrl,
        },
      }),
    },
    // The API process is given the names (as api-main is when it has the same configuration).
    policy: { ...DEFAULT_API_POLICY, credentialNames: [CREDENTIAL] },
  });
});
afterAll(async () => {
  await h?.close();
  await forge?.close();
});

function gitIn(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', ...args], {
    cwd: dir,
    encoding: 'utf8',
    stdio: 'pipe',
  });
}

async function passingLoop(origin: string, overrides: Parameters<typeof loopRequest>[2] = {}) {
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: cleanLedger });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(origin, maker.argv, overrides));
  expect(submitted.status).toBe(201);
  return submitted.body.id as string;
}

test('PASS pushes the branch to the origin at the checkpoint; the patch applies on the base', async () => {
  const origin = createBareOrigin();
  const id = await passingLoop(origin);
  // No patch before delivery.
  expect((await h.request('GET', `/v1/loops/${id}/patch`)).status).toBe(404);
  const loop = await h.waitForLoop(id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
  const checkpoint = loop.iterations.at(-1).checkpointCommit;
  expect(loop.delivery).toEqual({
    pushedBranch: `engineering-loop/${id}`,
    pullRequestUrl: null,
    deliveryError: null,
    contextImpact: 'NONE',
  });
  expect(gitIn(origin, 'rev-parse', `refs/heads/engineering-loop/${id}`).trim()).toBe(checkpoint);

  const report = await h.request('GET', `/v1/loops/${id}/report`);
  expect(report.body.body.delivery).toMatchObject({
    pushedBranch: `engineering-loop/${id}`,
    pushedTo: origin,
    error: null,
  });
  expect(report.body.markdown).toContain(`- pushed: \`engineering-loop/${id}\` to ${origin}`);

  const res = await fetch(`${h.baseUrl}/v1/loops/${id}/patch`, {
    headers: { authorization: `Bearer ${h.keys.approver}` },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/x-patch/);
  const patch = await res.text();
  expect(patch).toContain('+exports.sum = (a, b) => a + b;');
  const checkout = fs.mkdtempSync(path.join(os.tmpdir(), 'loop-apply-'));
  gitIn(checkout, 'clone', '--quiet', origin, '.');
  fs.writeFileSync(path.join(checkout, 'loop.patch'), patch);
  gitIn(checkout, 'apply', '--check', 'loop.patch');

  // The same change as a diff from the base, which GET /diff served before delivery too.
  const diff = await fetchDiff(id);
  expect(diff.status).toBe(200);
  expect(diff.headers.get('content-type')).toMatch(/^text\/x-diff/);
  expect([diff.headers.get('x-iteration'), diff.headers.get('x-checkpoint')]).toEqual(['1', checkpoint]);
  expect([diff.headers.get('x-diff-truncated'), diff.headers.get('x-diff-bytes')]).toEqual([
    'false',
    String(Buffer.byteLength(diff.text)),
  ]);
  expect(diff.text).toContain('+exports.sum = (a, b) => a + b;');
  fs.writeFileSync(path.join(checkout, 'loop.diff'), diff.text);
  gitIn(checkout, 'apply', '--check', 'loop.diff');
  fs.rmSync(checkout, { recursive: true, force: true });
  expect((await fetchDiff(id, '?iteration=2')).status).toBe(404);
  const refused = await fetchDiff(id, '?iteration=0');
  expect(refused.status).toBe(400);
  expect(refused.text).toContain('iteration');
});

async function fetchDiff(id: string, query = '') {
  const res = await fetch(`${h.baseUrl}/v1/loops/${id}/diff${query}`, {
    headers: { authorization: `Bearer ${h.keys.approver}` },
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** A loop held at its contract approval (workspace cloned, contract frozen), so the test can move `main` under it. */
async function heldLoop(repo: string, steps: Record<string, { write: Record<string, string> }>) {
  const maker = scriptedMaker({ steps });
  const submitted = await h.request(
    'POST',
    '/v1/loops',
    loopRequest(repo, maker.argv, { requireContractApproval: true }),
  );
  const waiting = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION']);
  return {
    id: waiting.id as string,
    workflowId: waiting.workflowId as string,
    startedFrom: waiting.baseCommit as string,
    approveContract: () =>
      h.request('POST', `/v1/loops/${waiting.id}/decisions`, {
        kind: 'approve',
        escalationId: waiting.escalations[0].id,
      }),
  };
}

/** Decides the loop's next escalation with `trigger` once it is open; what it was, and its report. */
async function decide(id: string, trigger: string, decision: Record<string, unknown>) {
  let loop: any;
  for (;;) {
    loop = await h.waitForLoop(id, ['AWAITING_DECISION', 'PASSED', 'APPROVED', 'FAILED', 'REJECTED']);
    if (loop.status !== 'AWAITING_DECISION') throw new Error(`loop ${id} ended ${loop.status} before ${trigger}`);
    if (loop.escalations.at(-1).trigger === trigger && !loop.escalations.at(-1).decision) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const escalation = loop.escalations.at(-1);
  const report = await h.request('GET', `/v1/loops/${id}/report`);
  expect(report.body.kind).toBe('ESCALATION');
  const decided = await h.request('POST', `/v1/loops/${id}/decisions`, { ...decision, escalationId: escalation.id });
  expect(decided.status).toBe(202);
  return report.body;
}

test('a base that moved cleanly under the change: the change is replayed onto it, verified again and delivered from it', async () => {
  const repo = createFixtureRepo();
  const loop = await heldLoop(repo, { '1': { write: { 'src/sum.js': CORRECT_SUM } } });
  commitFiles(repo, { 'CHANGELOG.md': '# Changes\n- upstream: a changelog\n' }, 'upstream: changelog');
  const moved = gitIn(repo, 'rev-parse', 'main').trim();
  const reviewsBefore = h.llm.requests.length;
  h.llm.enqueue({ content: cleanLedger });
  expect((await loop.approveContract()).status).toBe(202);

  const passed = await h.waitForLoop(loop.id, ['PASSED', 'FAILED', 'REJECTED']);
  expect(passed.status).toBe('PASSED');
  expect(passed.baseCommit).toBe(moved);
  expect(passed.delivery.contextImpact).toBe('NONE');
  // Iteration #2 is the change on the moved base: no maker, verified again (one review, of #1).
  expect(
    passed.iterations.map((i: any) => [i.sequence, i.startCommit, i.verdict?.verdict, i.replayedFrom?.base]),
  ).toEqual([
    [1, loop.startedFrom, 'PASS', undefined],
    [2, moved, 'PASS', loop.startedFrom],
  ]);
  expect(passed.iterations[1].evidence.map((e: any) => [e.gate, e.status])).toContainEqual(['tests', 'PASSED']);
  expect(h.llm.requests.length - reviewsBefore).toBe(1);

  const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
  expect(report.body.body).toMatchObject({
    baseCommit: moved,
    checkpointCommit: passed.iterations[1].checkpointCommit,
    replayed: { fromBase: loop.startedFrom, fromCheckpoint: passed.iterations[0].checkpointCommit },
    baseDrift: { behind: 0, conflicts: [] },
  });
  expect(report.body.markdown).toContain(`verified against base \`${moved}\``);
  // The delivered branch sits on the moved base, and its patch applies there.
  expect(gitIn(repo, 'merge-base', '--is-ancestor', moved, passed.branch)).toBe('');
  const patch = await fetch(`${h.baseUrl}/v1/loops/${loop.id}/patch`, {
    headers: { authorization: `Bearer ${h.keys.approver}` },
  }).then((r) => r.text());
  const checkout = fs.mkdtempSync(path.join(os.tmpdir(), 'loop-apply-'));
  gitIn(checkout, 'clone', '--quiet', repo, '.');
  fs.writeFileSync(path.join(checkout, 'loop.patch'), patch);
  gitIn(checkout, 'apply', '--check', 'loop.patch');
  fs.rmSync(checkout, { recursive: true, force: true });
  // The replayed iteration's change is from the moved base.
  const diff = await fetchDiff(loop.id);
  expect([diff.headers.get('x-iteration'), diff.headers.get('x-checkpoint')]).toEqual([
    '2',
    passed.iterations[1].checkpointCommit,
  ]);
  expect(diff.text).toContain('+exports.sum = (a, b) => a + b;');
  expect(diff.text).not.toContain('CHANGELOG.md');
  recordHistory(loop.workflowId, 'base-moved-replayed-then-pass');
  recordHistory(loop.workflowId, 'deliver-when-prepared-base-moved-replayed-then-pass');
});

test('a base that moved and breaks the change: BASE_DRIFT escalates, and a retry makes it pass on the moved base', async () => {
  const repo = createFixtureRepo();
  const loop = await heldLoop(repo, {
    '1': { write: { 'src/sum.js': CORRECT_SUM } },
    // #2 is the replay on the moved base; #3, after the retry, handles what upstream now asks of sum().
    '3': { write: { 'src/sum.js': 'exports.sum = (a, b) => Number(a) + Number(b);\n' } },
  });
  commitFiles(
    repo,
    {
      'test/strings.test.js': [
        "const test = require('node:test');",
        "const assert = require('node:assert');",
        "const { sum } = require('../src/sum');",
        "test('sum adds numeric strings', () => assert.strictEqual(sum('2', '3'), 5));",
        '',
      ].join('\n'),
    },
    'upstream: sum takes numeric strings',
  );
  const moved = gitIn(repo, 'rev-parse', 'main').trim();
  h.llm.enqueue({ content: cleanLedger });
  h.llm.enqueue({ content: cleanLedger });
  expect((await loop.approveContract()).status).toBe(202);

  const escalation = await decide(loop.id, 'BASE_DRIFT', {
    kind: 'retry',
    guidance: 'sum() must also add numeric strings now',
  });
  expect(escalation.markdown).toContain(`moved 1 commit(s) since the loop started (now \`${moved}\`)`);

  const passed = await h.waitForLoop(loop.id, ['PASSED', 'FAILED', 'REJECTED']);
  expect(passed.status).toBe('PASSED');
  expect(passed.iterations.map((i: any) => [i.sequence, i.verdict?.verdict, i.replayedFrom !== null])).toEqual([
    [1, 'PASS', false],
    [2, 'ITERATE', true],
    [3, 'PASS', false],
  ]);
  expect(passed.iterations[2].startCommit).toBe(passed.iterations[1].checkpointCommit);
  expect(passed.baseCommit).toBe(moved);
  recordHistory(loop.workflowId, 'base-drift-new-failure-retry-then-pass');
});

test('a base that moved under the change so that it no longer merges: BASE_DRIFT escalates; approve delivers it as it is', async () => {
  const repo = createFixtureRepo();
  const loop = await heldLoop(repo, { '1': { write: { 'src/sum.js': CORRECT_SUM } } });
  commitFiles(repo, { 'src/sum.js': 'exports.sum = (a, b) => Number(a) + Number(b); // upstream\n' }, 'upstream fix');
  h.llm.enqueue({ content: cleanLedger });
  expect((await loop.approveContract()).status).toBe(202);

  await decide(loop.id, 'BASE_DRIFT', { kind: 'approve' });
  const approved = await h.waitForLoop(loop.id, ['APPROVED', 'PASSED', 'FAILED', 'REJECTED']);
  expect(approved.status).toBe('APPROVED');
  expect(approved.iterations).toHaveLength(1);
  expect(approved.baseCommit).toBe(loop.startedFrom);
  const report = await h.request('GET', `/v1/loops/${approved.id}/report`);
  expect(report.body.body.baseDrift).toMatchObject({
    baseRef: 'main',
    baseCommit: loop.startedFrom,
    currentCommit: gitIn(repo, 'rev-parse', 'main').trim(),
    behind: 1,
    conflicts: ['src/sum.js'],
    problem: null,
  });
  expect(report.body.markdown).toContain('the change no longer merges cleanly: conflicts in src/sum.js');
  expect(report.body.body.contextImpact).toEqual({ level: 'NONE', reasons: [] });
});

test('a named credential opens a draft GitHub pull request; the secret reaches no row, history or log', async () => {
  const origin = createBareOrigin();
  const before = forge.requests.length;
  const id = await passingLoop(origin, {
    repository: { url: origin, baseRef: 'main', credential: CREDENTIAL },
    delivery: { pullRequest: { provider: 'github', project: 'acme/widgets' } },
  });
  const loop = await h.waitForLoop(id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
  recordHistory(loop.workflowId, 'deliver-pull-request');
  expect(loop.delivery).toEqual({
    pushedBranch: `engineering-loop/${id}`,
    pullRequestUrl: expect.stringMatching(/^https:\/\/github\.example\/acme\/widgets\/pull\/\d+$/),
    deliveryError: null,
    contextImpact: 'NONE',
  });

  const sent = forge.requests.slice(before);
  expect(sent).toHaveLength(1);
  expect(sent[0]).toMatchObject({
    method: 'POST',
    path: '/repos/acme/widgets/pulls',
    body: { head: `engineering-loop/${id}`, base: 'main', draft: true, title: 'Make sum() add its two arguments.' },
  });
  expect(sent[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
  expect(sent[0]!.headers.accept).toBe('application/vnd.github+json');
  expect(sent[0]!.body.body).toContain('### Definition of Done');
  expect(sent[0]!.body.body).toContain('| AC-1 | sum adds two numbers | PROVEN |');
  expect(sent[0]!.body.body).toContain('### Context impact: NONE');
  expect(sent[0]!.body.body).toContain('### Base\n`main` has not moved since the loop started');

  const handle = h.temporal.workflow.getHandle(loop.workflowId);
  // The loop's row says PASSED before the workflow's next task upserts the search attribute: wait for it.
  const deadline = Date.now() + 30_000;
  let shown = (await handle.describe()).typedSearchAttributes.get(LoopPullRequestKey);
  while (shown === undefined && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    shown = (await handle.describe()).typedSearchAttributes.get(LoopPullRequestKey);
  }
  expect(shown).toBe(loop.delivery.pullRequestUrl);
  const report = await h.request('GET', `/v1/loops/${id}/report`);
  expect(report.body.markdown).toContain(`- pull request: ${loop.delivery.pullRequestUrl}`);

  // The credential is a name everywhere the service keeps or sends things.
  // Payloads come base64-encoded: decode every one.
  const raw = JSON.stringify(await handle.fetchHistory());
  const history = [
    raw,
    ...[...raw.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('utf8')),
  ].join('\n');
  expect(history).toContain(CREDENTIAL);
  expect(history).not.toContain(SECRET);
  const row = await h.db.prisma.loop.findUniqueOrThrow({
    where: { id },
    include: { reports: true, executions: true, evidence: true },
  });
  expect(JSON.stringify(row)).not.toContain(SECRET);
  expect(JSON.stringify(loop)).not.toContain(SECRET);
  expect(h.worker.output()).not.toContain(SECRET);
});

test('a push that fails is recorded; the loop still passes', async () => {
  const origin = createBareOrigin();
  const missing = path.join(os.tmpdir(), `no-such-origin-${Date.now()}.git`);
  const id = await passingLoop(origin, { delivery: { pushUrl: missing } });
  const loop = await h.waitForLoop(id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
  expect(loop.delivery).toMatchObject({
    pushedBranch: null,
    pullRequestUrl: null,
    deliveryError: expect.stringMatching(/^push failed: git push/),
  });
  const report = await h.request('GET', `/v1/loops/${id}/report`);
  expect(report.body.markdown).toContain('- delivery error: push failed');
  // The patch is there for whoever pushes by hand.
  expect(
    (await fetch(`${h.baseUrl}/v1/loops/${id}/patch`, { headers: { authorization: `Bearer ${h.keys.admin}` } })).status,
  ).toBe(200);
});

test('a credential the operator did not configure, or credentials in a URL, get a 400 naming the field', async () => {
  const origin = createBareOrigin();
  const body = loopRequest(origin, ['true'], {
    repository: { url: origin, baseRef: 'main', credential: 'nobody-configured-this' },
  });
  const unknown = await h.request('POST', '/v1/loops', body);
  expect(unknown.status).toBe(400);
  expect(unknown.body.message).toContain('body.repository.credential');
  const embedded = await h.request(
    'POST',
    '/v1/loops',
    loopRequest('https://x-access-token:abc@github.com/acme/widgets.git', ['true']),
  );
  expect(embedded.status).toBe(400);
  expect(embedded.body.message).toContain('repository.url');
});
