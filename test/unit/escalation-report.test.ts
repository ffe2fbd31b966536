import { renderEscalationReport, type EscalationReport } from '../../domain/reports';

// The escalation report's Markdown (docs/design.md §7.1): when the maker gamed verification, section 4 opens with
// the system's findings grouped by rule, each with where it is and what it would have hidden; reports
// stored before the grouping existed (no `gaming` field) render exactly as they did.

const stored: EscalationReport = {
  trigger: 'MAX_ITERATIONS',
  roundIteration: 1,
  maxIterations: 1,
  attempts: [
    {
      sequence: 1,
      roundIteration: 1,
      changedFiles: ['test/price.test.js'],
      verdict: 'FAIL',
      reasons: ['3 valid blocking finding(s)'],
    },
  ],
  coreBlocker: '3 valid blocking finding(s)\nRevert the change to test/price.test.js and meet the contract without it.',
  openFindings: [
    {
      findingId: 'TMP-001',
      title: 'Test weakened: total takes 10% off from 100 up',
      severity: 'BLOCKER',
      location: 'test/price.test.js:5-5',
    },
    {
      findingId: 'TMP-002',
      title: 'Test weakened: total takes 10% off at exactly 100',
      severity: 'BLOCKER',
      location: 'test/price.test.js:8-8',
    },
    {
      findingId: 'VER-001',
      title: 'Base test fails: total > takes 10% off from 100 up',
      severity: 'BLOCKER',
      location: 'test/price.test.js:4-4',
    },
  ],
  options: [
    { decision: 'retry', description: 'send the maker back' },
    { decision: 'approve', description: 'accept checkpoint abc123 as it is' },
  ],
  workspace: { branch: 'loop/1', checkpointCommit: 'abc123', gates: [{ gate: 'tests', status: 'PASSED' }] },
  sandbox: 'bubblewrap',
};

const TESTS_WEAKENED_HIDES = 'the test would still pass with the behaviour it used to check broken';
const TEST_WEAKENED_HIDES =
  "with the maker's edit to the test the gate was green, but the unedited test fails against the same code";

const gamed: EscalationReport = {
  ...stored,
  gaming: [
    {
      rule: 'TESTS_WEAKENED',
      findings: [
        { findingId: 'TMP-001', location: 'test/price.test.js:5-5', hides: TESTS_WEAKENED_HIDES },
        { findingId: 'TMP-002', location: 'test/price.test.js:8-8', hides: TESTS_WEAKENED_HIDES },
      ],
    },
    {
      rule: 'TEST_WEAKENED',
      findings: [{ findingId: 'VER-001', location: 'test/price.test.js:4-4', hides: TEST_WEAKENED_HIDES }],
    },
  ],
};

const OPEN_FINDINGS_TABLE = [
  '| finding | title | severity | location |',
  '| --- | --- | --- | --- |',
  '| TMP-001 | Test weakened: total takes 10% off from 100 up | BLOCKER | test/price.test.js:5-5 |',
  '| TMP-002 | Test weakened: total takes 10% off at exactly 100 | BLOCKER | test/price.test.js:8-8 |',
  '| VER-001 | Base test fails: total > takes 10% off from 100 up | BLOCKER | test/price.test.js:4-4 |',
];

/** The report as renderEscalationReport wrote it before `gaming` existed, with section 4 in between. */
const markdown = (section4: string[]) =>
  [
    '# Escalation — MAX_ITERATIONS',
    '',
    '## 1. Trigger',
    'Escalated at iteration 1 of 1 because the iteration limit was reached.',
    '',
    '## 2. What each iteration tried',
    '| # | K | changed files | maker | verdict | why |',
    '| --- | --- | --- | --- | --- | --- |',
    '| 1 | 1 | test/price.test.js | — | FAIL | 3 valid blocking finding(s) |',
    '',
    '## 3. Core blocker',
    '3 valid blocking finding(s)',
    'Revert the change to test/price.test.js and meet the contract without it.',
    '',
    '## 4. Open findings',
    ...section4,
    '',
    '## 5. Options',
    '1. **retry** — send the maker back',
    '2. **approve** — accept checkpoint abc123 as it is',
    '',
    '## 6. Workspace',
    '- branch: `loop/1`',
    '- checkpoint commit: `abc123`',
    '- gates: tests PASSED',
    '- sandbox: bubblewrap',
  ].join('\n');

test('a report stored before the gaming grouping existed renders as it did: section 4 is the open findings table', () => {
  expect('gaming' in stored).toBe(false);
  expect(renderEscalationReport(stored)).toBe(markdown(OPEN_FINDINGS_TABLE));
});

test('no gaming (an empty list) renders like no field at all', () => {
  expect(renderEscalationReport({ ...stored, gaming: [] })).toBe(renderEscalationReport(stored));
});

test('gaming opens section 4: the rules that fired, each finding with its place and what it would have hidden, then every open finding', () => {
  expect(renderEscalationReport(gamed)).toBe(
    markdown([
      '### The maker gamed verification: 3 system finding(s) under TESTS_WEAKENED, TEST_WEAKENED',
      '| rule | finding | location | what it would have hidden |',
      '| --- | --- | --- | --- |',
      `| TESTS_WEAKENED | TMP-001 | test/price.test.js:5-5 | ${TESTS_WEAKENED_HIDES} |`,
      `| TESTS_WEAKENED | TMP-002 | test/price.test.js:8-8 | ${TESTS_WEAKENED_HIDES} |`,
      `| TEST_WEAKENED | VER-001 | test/price.test.js:4-4 | ${TEST_WEAKENED_HIDES} |`,
      '',
      '### All open findings',
      ...OPEN_FINDINGS_TABLE,
    ]),
  );
});

test('the gaming table is a table whatever the text holds: pipes are escaped, line breaks flattened', () => {
  const odd: EscalationReport = {
    ...stored,
    gaming: [
      {
        rule: 'GATE_ENTRYPOINT_CHANGED',
        findings: [
          { findingId: 'TMP-001', location: 'scripts/a|b.sh:1-1', hides: 'the gate would run\nsomething else' },
        ],
      },
    ],
  };
  const rendered = renderEscalationReport(odd);
  expect(rendered).toContain('### The maker gamed verification: 1 system finding(s) under GATE_ENTRYPOINT_CHANGED\n');
  expect(rendered).toContain(
    '| GATE_ENTRYPOINT_CHANGED | TMP-001 | scripts/a\\|b.sh:1-1 | the gate would run something else |',
  );
});

test('an attempt that changed thousands of files names the first ones and how many more', () => {
  const files = Array.from({ length: 20 }, (_, i) => `generated/f${i}.js`);
  const attempt = { ...stored.attempts[0]!, changedFiles: files, changedFileCount: 100_001 };
  const markdown = renderEscalationReport({ ...stored, attempts: [attempt] });
  expect(markdown).toContain(`| 1 | 1 | ${files.join(', ')}, … and 99981 more | — | FAIL |`);
});

test('the operator policy in force closes section 6: each ceiling, each preset allow-list; "none" when empty', () => {
  const withPolicy = renderEscalationReport({
    ...stored,
    operatorPolicy: {
      maxIterations: 4,
      allowedMakerBackends: ['codex', 'aider'],
      agentNetwork: { codex: ['models.internal:8443'], aider: [] },
    },
  });
  expect(withPolicy.split('\n').at(-1)).toBe(
    '- operator policy: maxIterations 4; allowedMakerBackends codex, aider; agentNetwork (codex: models.internal:8443; aider: no host)',
  );
  expect(
    renderEscalationReport({ ...stored, operatorPolicy: {} })
      .split('\n')
      .at(-1),
  ).toBe('- operator policy: none');
});
