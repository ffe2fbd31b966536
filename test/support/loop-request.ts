import type { LoopRequestBody } from '../../domain/loop-request';

/** A loop request against the fixture repository, with the node:test suite as the tests gate. */
export function loopRequest(
  repoPath: string,
  makerArgv: string[],
  overrides: Partial<LoopRequestBody> = {},
): LoopRequestBody {
  return {
    repository: { url: repoPath, baseRef: 'main' },
    contract: {
      objective: 'Make sum() add its two arguments.',
      outcome: 'Callers of sum() get the arithmetic sum.',
      acceptanceCriteria: [
        { id: 'AC-1', statement: 'sum adds two numbers', verification: { type: 'test', name: 'sum adds two numbers' } },
        { id: 'AC-2', statement: 'the test suite passes', verification: { type: 'gate', gate: 'tests' } },
      ],
      constraints: ['Do not change the tests.'],
    },
    gates: [{ gate: 'tests', argv: ['node', '--test'], timeoutSeconds: 120 }],
    maker: { backend: 'command', argv: makerArgv, timeoutSeconds: 300 },
    maxIterations: 3,
    ...overrides,
  };
}
