import { cleanLedger } from './fake-llm-server';
import { scriptedMaker } from './fixture-repo';
import { gitRepository } from './gaming-projects';
import type { LoopHarness } from './loop-harness';
import type { LoopRequestBody } from '../../domain/loop-request';

// One gaming loop, as the gaming matrices run it (gaming.e2e.test.ts, gaming-evidence.e2e.test.ts): a
// repository holding the project's files, a scripted maker making one change in its first iteration, a
// reviewer that reports nothing, and what the loop ended with, read from the database.

/** What the maker does in its one iteration: files written, then files deleted (both: a rename). */
export interface Change {
  write?: Record<string, string>;
  remove?: string[];
}

export interface Outcome {
  loopId: string;
  status: string;
  trigger: string | null;
  /** SYSTEM findings as `RULE file:line` (VALID BLOCKERs), `RULE [SEVERITY/VALIDITY] file:line` otherwise. */
  findings: string[];
  /** Their evidence, in the same order. */
  evidence: string[];
  gates: string[];
  /** The tests the tests gate reported passed, by name. */
  passedTests: string[];
  ms: number;
}

const ENDED = ['PASSED', 'FAILED', 'AWAITING_DECISION', 'REJECTED', 'CANCELLED'];

/** One loop over a repository holding `files`, whose maker makes `change` in its first iteration. */
export async function runLoop(
  h: LoopHarness,
  name: string,
  files: Record<string, string>,
  change: Change,
  request: (repo: string, makerArgv: string[]) => LoopRequestBody,
): Promise<Outcome> {
  const started = Date.now();
  const repo = gitRepository(files, name);
  const maker = scriptedMaker({ steps: { '1': change } });
  // One clean ledger per loop: a loop whose gates fail is not reviewed, and the spare answers are all alike.
  h.llm.enqueue({ content: cleanLedger });
  const submitted = await h.request('POST', '/v1/loops', request(repo, maker.argv));
  if (submitted.status !== 201) throw new Error(`${name}: submission refused: ${JSON.stringify(submitted.body)}`);
  const id: string = submitted.body.id;
  // The database, not the API, is polled: many loops at once would hit the API's rate limit.
  const deadline = Date.now() + 600_000;
  let loop = await h.db.prisma.loop.findUniqueOrThrow({ where: { id } });
  while (!ENDED.includes(loop.status)) {
    if (Date.now() > deadline)
      throw new Error(
        `${name}: loop ${id} still ${loop.status}/${loop.phase}\nworker output:\n${h.worker.output().slice(-4000)}`,
      );
    await new Promise((r) => setTimeout(r, 500));
    loop = await h.db.prisma.loop.findUniqueOrThrow({ where: { id } });
  }
  if (loop.status === 'FAILED') throw new Error(`${name}: loop failed: ${loop.failureReason}`);
  const [findings, verdicts, evidence] = await Promise.all([
    h.db.prisma.finding.findMany({ where: { loopId: id, source: 'SYSTEM' }, orderBy: { findingId: 'asc' } }),
    h.db.prisma.verdict.findMany({ where: { loopId: id }, orderBy: { createdAt: 'asc' } }),
    h.db.prisma.evidence.findMany({ where: { loopId: id }, orderBy: { gateOrder: 'asc' } }),
  ]);
  return {
    loopId: id,
    status: loop.status,
    trigger: verdicts.at(-1)?.trigger ?? null,
    findings: findings.map((f) => {
      const location = f.location as { file: string; startLine: number };
      // Tamper findings are VALID BLOCKERs; anything else says what it is.
      const kind = f.severity === 'BLOCKER' && f.validity === 'VALID' ? '' : ` [${f.severity}/${f.validity}]`;
      return `${f.rule}${kind} ${location.file}:${location.startLine}`;
    }),
    evidence: findings.map((f) => f.evidence),
    gates: evidence.map((e) => `${e.gate}:${e.status === 'PASSED' ? 'ok' : 'FAIL'}`),
    passedTests: (evidence.find((e) => e.gate === 'tests')?.passedTests as string[] | null) ?? [],
    ms: Date.now() - started,
  };
}

/**
 * The shop's task (fix the discount), each named test an acceptance criterion, the gates the
 * repository's own (package.json scripts, go.mod, Cargo.toml, pom.xml, the Python project's verification.json);
 * no set-up unless `inferSetup`.
 */
export function shopLoopRequest(
  repo: string,
  makerArgv: string[],
  {
    acTests,
    scope,
    maxIterations = 1,
    inferSetup = false,
  }: { acTests: string[]; scope?: string[]; maxIterations?: number; inferSetup?: boolean },
): LoopRequestBody {
  return {
    repository: { url: repo, baseRef: 'main' },
    contract: {
      objective: 'Fix the discount: orders from 100 up get 10% off.',
      outcome: 'total() takes 10% off every order of 100 or more.',
      acceptanceCriteria: acTests.map((name, i) => ({
        id: `AC-${i + 1}`,
        statement: `the test ${name} passes`,
        verification: { type: 'test' as const, name },
      })),
      constraints: ['Keep the existing tests and how they run; add tests if you like.'],
      outOfScope: ['deploy/**', 'Changing the public API.'],
      ...(scope ? { scope } : {}),
    },
    // The JavaScript runners come from the worker's PATH (runner-packages.ts); a Maven project and a pnpm library install their own.
    ...(inferSetup ? {} : { setup: [] }),
    maker: { backend: 'command', argv: makerArgv, timeoutSeconds: 120 },
    maxIterations,
  };
}
