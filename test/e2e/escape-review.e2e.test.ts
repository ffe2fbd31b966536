import fs from 'node:fs';
import path from 'node:path';
import { cleanLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, commitFiles, createFixtureRepo } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';
import { recordHistory } from '../support/histories';
import { FIXTURES_DIR, sharedTestDir } from '../support/sandbox';

// The escape suite, review part (docs/design.md §5.1): a maker that buries the real fix in volume must
// not get a PASS from a reviewer that saw only part of it. Past the review's ceiling the loop escalates
// REVIEW_INCOMPLETE naming what was not reviewed; below it a large diff is reviewed whole, in parts,
// with only the files a named rule leaves out unseen.

const BULK_MAKER = path.join(FIXTURES_DIR, 'agents', 'bulk-maker.js');
const ENDED = ['PASSED', 'FAILED', 'AWAITING_DECISION', 'REJECTED', 'CANCELLED'];

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness();
});
afterAll(async () => {
  await h?.close();
});

function bulkMaker(plan: {
  bulk: Array<{ dir: string; count: number; bytes: number }>;
  write: Record<string, string>;
}) {
  const file = path.join(sharedTestDir('bulk-maker-'), 'plan.json');
  fs.writeFileSync(file, JSON.stringify(plan));
  return [process.execPath, BULK_MAKER, file];
}

const reviewerCalls = (from: number) =>
  h.llm.requests.slice(from).filter((r) => r.body.messages[0]!.content.includes('adversarial code reviewer'));

test('100,000 generated files beside the real fix: no PASS, REVIEW_INCOMPLETE naming what was not reviewed', async () => {
  const argv = bulkMaker({
    bulk: [{ dir: 'generated', count: 100_000, bytes: 60 }],
    write: { 'src/sum.js': CORRECT_SUM },
  });
  const before = h.llm.requests.length;
  const res = await h.request('POST', '/v1/loops', loopRequest(createFixtureRepo(), argv));
  expect(res.status).toBe(201);
  const loop = await h.waitForLoop(res.body.id, ENDED, 600_000);
  expect([loop.status, loop.failureReason]).toEqual(['AWAITING_DECISION', null]);
  expect(loop.escalations[0].trigger).toBe('REVIEW_INCOMPLETE');
  // The gates passed (the fix is real), so only the review stands between the change and a PASS.
  expect(loop.iterations[0].evidence.map((e: any) => [e.gate, e.status])).toContainEqual(['tests', 'PASSED']);
  const explain = await h.request('GET', `/v1/loops/${loop.id}/iterations/1/explain`);
  expect(explain.body.rule).toBe('REVIEW_INCOMPLETE');
  expect(explain.body.reasons[0]).toMatch(
    /^review incomplete: 100001 changed files exceed the review's ceiling of 1000; a \d+-byte diff exceeds the review's ceiling of 1000000 bytes; not reviewed: 100001 changed file\(s\), \d+ bytes of diff \(generated\/ 100000, src\/ 1\)$/,
  );
  // The reviewer was never asked about a part of the change as if it were the whole.
  expect(reviewerCalls(before)).toEqual([]);
  recordHistory(loop.workflowId, 'review-incomplete-escalates');
}, 900_000);

test('a large diff is reviewed whole in parts; files the base marks generated are left out by name', async () => {
  const repo = createFixtureRepo();
  commitFiles(repo, { '.gitattributes': 'generated/** linguist-generated\n' }, 'generated files');
  const argv = bulkMaker({
    bulk: [
      { dir: 'generated', count: 3, bytes: 300_000 },
      { dir: 'data', count: 2, bytes: 150_000 },
    ],
    write: { 'src/sum.js': CORRECT_SUM },
  });
  const before = h.llm.requests.length;
  h.llm.enqueue({ content: cleanLedger }, { content: cleanLedger });
  const res = await h.request('POST', '/v1/loops', loopRequest(repo, argv));
  const loop = await h.waitForLoop(res.body.id, ENDED);
  expect(loop.status).toBe('PASSED');

  const prompts = reviewerCalls(before).map((r) => r.body.messages[1]!.content);
  expect(prompts).toHaveLength(2);
  expect(prompts[0]).toContain('# Diff against the base commit, part 1 of 2');
  expect(prompts[1]).toContain('# Diff against the base commit, part 2 of 2');
  // Every reviewed file's diff is in exactly one part; the generated ones in none, but named in each.
  for (const file of ['data/f0.txt', 'data/f1.txt', 'src/sum.js']) {
    expect([file, prompts.filter((p) => p.includes(`diff --git a/${file} b/${file}`)).length]).toEqual([file, 1]);
  }
  for (const prompt of prompts) {
    expect(prompt).not.toContain('diff --git a/generated/');
    expect(prompt).toContain('- generated/f0.txt (LINGUIST_GENERATED)');
  }
  const explain = await h.request('GET', `/v1/loops/${loop.id}/iterations/1/explain`);
  expect(explain.body.reasons).toContain(
    'not reviewed (LINGUIST_GENERATED): 3 file(s): generated/f0.txt, generated/f1.txt, generated/f2.txt',
  );
  recordHistory(loop.workflowId, 'review-in-parts-then-pass');
});
