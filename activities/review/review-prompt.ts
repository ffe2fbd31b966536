import type { FrozenContract } from '../../domain/contract';
import { FINDING_TOPICS } from '../../domain/ledger';
import { sanitise } from '../../domain/sanitise';
import type { ChatMessage } from './chat-completions';
import { newBoundary, untrustedBlock, untrustedNotice } from './untrusted';

// The reviewer sees only the frozen contract, the diff against the base commit, the verification
// summary and prior finding signatures (docs/design.md §5.1) — never the maker's transcript.

export interface ReviewContext {
  frozen: FrozenContract;
  diff: string;
  /** Which part of the change's diff this prompt holds, when it is reviewed in several. */
  part: { index: number; count: number; files: string[] } | null;
  /** Files left out of the review by a named rule (domain/review-scope.ts): told to the reviewer. */
  excluded: Array<{ file: string; rule: string }>;
  verificationSummary: string[];
  priorSignatures: string[];
  /** Topics to dig into first, chosen from the project profile. */
  focusTopics: string[];
  /** Manifests and lockfiles the change touches: set-up installs from them, so they deserve a look of their own. */
  dependencyChanges: string[];
  /** Base versions of the tests that matter to this change (frozen-tests-for-review.ts). */
  frozenTests: Array<{ file: string; text: string }>;
}

const systemPrompt = (
  boundary: string,
) => `You are an adversarial code reviewer (devil's advocate). Find real defects in the change
against its contract: correctness, error handling, security, concurrency, performance, maintainability, testing gaps.
Do not praise. Report only what the diff shows. Answer with ONE JSON object and nothing else:
{"findings": [{
  "id": "COR-001" (three capital letters, dash, three digits; unique),
  "title": string,
  "topic": one of ${FINDING_TOPICS.map((t) => `"${t}"`).join(', ')},
  "severity": "BLOCKER" | "HIGH" | "MEDIUM" | "LOW",
  "validity": "VALID" | "INVALID",
  "disposition": "STRONG" | "ACCEPTABLE" | "WEAK",
  "location": {"file": string, "startLine": integer >= 1, "endLine": integer >= startLine},
  "acceptanceCriteria": ["AC-1", ...] or ["GENERAL_REGRESSION"],
  "evidence": string, "failureScenario": string, "reproduction": string,
  "concreteAlternativeDiff": string (required when validity is VALID and severity is BLOCKER or HIGH)
}]}
Gaming the tests is a BLOCKER (topic testing_gaps). Look for each of these:
- special cases: returning the values a test expects for the test's own inputs;
- detecting the test run: JEST_WORKER_ID, VITEST, NODE_TEST_CONTEXT, NODE_ENV === 'test', typeof it, global.it,
  "pytest" in sys.modules, PYTEST_CURRENT_TEST, testing.Testing(), cfg!(test), #[cfg(test)] on product code, or CI;
- product code that imports or patches a test framework or assertion module (replacing assert.strictEqual,
  expect.extend, jest's snapshot state), or exits the process when imported;
- rewritten test data: golden files, snapshots, fixtures the tests compare against;
- markers that change what runs: skips (also conditional), only, #[should_panic], #[ignore], cfg on a test module,
  Go build constraints, tests expected to fail;
- a test moved, renamed or duplicated so the one an acceptance criterion names is no longer the one that runs.
Compare the change against the frozen tests shown.
An empty list {"findings": []} means you found nothing.
${untrustedNotice(boundary)}`;

export function buildReviewMessages(ctx: ReviewContext): ChatMessage[] {
  const c = ctx.frozen.contract;
  const boundary = newBoundary([ctx.diff, ...ctx.verificationSummary, ...ctx.frozenTests.map((f) => f.text)]);
  const user = [
    `# Contract v${ctx.frozen.version} (hash ${ctx.frozen.hash})`,
    `Objective: ${c.objective}`,
    `Outcome: ${c.outcome}`,
    'Acceptance criteria:',
    ...c.acceptanceCriteria.map((ac) => `- ${ac.id}: ${ac.statement}`),
    ...(c.constraints.length ? ['Constraints:', ...c.constraints.map((x) => `- ${x}`)] : []),
    '',
    `# Focus first on: ${ctx.focusTopics.join(', ')}`,
    '',
    '# Verification summary',
    ...untrustedBlock(boundary, 'what the gates reported, quoting their output', ctx.verificationSummary.join('\n')),
    '',
    ...(ctx.dependencyChanges.length
      ? [
          `# Dependency changes: ${ctx.dependencyChanges.join(', ')}`,
          'Set-up installs from these files before the gates run. Check that every added, removed or upgraded dependency is needed by the contract and comes from where it claims to.',
          '',
        ]
      : []),
    ...frozenTestsSection(boundary, ctx.frozenTests, c.allowTestChanges === true),
    '# Signatures of findings raised in earlier iterations',
    ctx.priorSignatures.length ? ctx.priorSignatures.join('\n') : '(none)',
    '',
    ...excludedSection(ctx.excluded),
    ...(ctx.part
      ? [
          `# Diff against the base commit, part ${ctx.part.index} of ${ctx.part.count}`,
          `The change is too large for one prompt, so it is reviewed in ${ctx.part.count} parts; this one holds the diff of ${ctx.part.files.length} file(s). Report what this part shows; the other parts are reviewed on their own.`,
        ]
      : ['# Diff against the base commit']),
    ...untrustedBlock(boundary, 'the diff', ctx.diff),
  ].join('\n');
  return [
    { role: 'system', content: systemPrompt(boundary) },
    // Contract, gate summaries and diff leave the service for a model: no secret goes with them.
    { role: 'user', content: sanitise(user) },
  ];
}

const EXCLUSIONS_NAMED = 50;

function excludedSection(excluded: ReviewContext['excluded']): string[] {
  if (excluded.length === 0) return [];
  const named = excluded.slice(0, EXCLUSIONS_NAMED).map((e) => `- ${e.file} (${e.rule})`);
  const more = excluded.length > EXCLUSIONS_NAMED ? [`- … and ${excluded.length - EXCLUSIONS_NAMED} more`] : [];
  return [
    '# Changed files left out of this review',
    'These changed, but their diff is not shown: LOCKFILE is a package manager lockfile (see the dependency changes), LINGUIST_GENERATED is marked generated by the base commit’s .gitattributes.',
    ...named,
    ...more,
    '',
  ];
}

function frozenTestsSection(
  boundary: string,
  files: ReviewContext['frozenTests'],
  testChangesAllowed: boolean,
): string[] {
  if (files.length === 0) return [];
  return [
    '# Frozen tests (their versions at the base commit)',
    testChangesAllowed
      ? 'The contract allows changing tests: every change the diff makes to these files is a changed test. Check that each one is what the contract asks for and checks no less than before.'
      : 'The contract does not allow changing these tests; they also run in their base versions against the change. Look for code that passes them by special-casing their inputs or the test run.',
    ...files.flatMap((f) => [`## ${f.file}`, ...untrustedBlock(boundary, `${f.file} at the base commit`, f.text)]),
    '',
  ];
}
