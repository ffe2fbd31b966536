import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { SHARED_MODULES } from '../../workflows/shared-modules';

// The workflow's domain modules are preloaded once per worker and deep-frozen by the Temporal SDK
// (reusable-vm.ts). Frozen zod schemas must still parse: valid input, invalid input (issues, not a
// TypeError from a write to a frozen object), string formats whose checks reset a RegExp.

/** The SDK's deepFreeze (packages/worker/src/workflow/reusable-vm.ts), applied to every shared module. */
function deepFreeze(object: unknown, visited = new WeakSet<object>()): unknown {
  if (object == null || (typeof object !== 'object' && typeof object !== 'function') || visited.has(object))
    return object;
  visited.add(object);
  if (Object.isFrozen(object)) return object;
  if (typeof object === 'object') {
    for (const name of [...Object.getOwnPropertyNames(object), ...Object.getOwnPropertySymbols(object)]) {
      const value: unknown = (object as Record<string | symbol, unknown>)[name];
      if (value && (typeof value === 'object' || typeof value === 'function')) {
        try {
          deepFreeze(value, visited);
        } catch {
          // As in the SDK: some objects cannot be frozen.
        }
      }
    }
  }
  return Object.freeze(object);
}

beforeAll(() => deepFreeze(SHARED_MODULES));

const HISTORIES = path.resolve(__dirname, '../fixtures/histories');

/** The loop input each recorded loop history started with: real requests of every loop path. */
function recordedInputs(): unknown[] {
  return fs.readdirSync(HISTORIES).flatMap((file) => {
    const started = JSON.parse(fs.readFileSync(path.join(HISTORIES, file), 'utf8')).events[0]
      .workflowExecutionStartedEventAttributes;
    if (started.workflowType.name !== 'engineeringLoop') return [];
    return [JSON.parse(Buffer.from(started.input.payloads[0].data, 'base64').toString('utf8'))];
  });
}

/** The same domain module, evaluated afresh and never frozen: what a workflow parsed with before. */
function unfrozenLoopRequest(): typeof SHARED_MODULES.loopRequest {
  let loaded: typeof SHARED_MODULES.loopRequest | undefined;
  jest.isolateModules(() => {
    loaded = jest.requireActual<typeof SHARED_MODULES.loopRequest>('../../domain/loop-request');
  });
  if (!loaded) throw new Error('domain/loop-request did not load');
  return loaded;
}

test('frozen, the loop input schema parses every recorded loop input as an unfrozen one does', () => {
  const inputs = recordedInputs();
  const unfrozen = unfrozenLoopRequest();
  expect(unfrozen.loopInputSchema).not.toBe(SHARED_MODULES.loopRequest.loopInputSchema);
  expect(inputs.length).toBeGreaterThan(15);
  for (const input of inputs) {
    const parsed = SHARED_MODULES.loopRequest.loopInputSchema.safeParse(input);
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual(unfrozen.loopInputSchema.parse(input));
  }
});

test('frozen, invalid loop input gets issues, not a TypeError', () => {
  const input = recordedInputs()[0] as { request: Record<string, unknown> };
  const broken = [
    { ...input, request: { ...input.request, maxIterations: -1 } },
    { ...input, request: { ...input.request, repository: { url: 'not a url\u0000' } } },
    { ...input, loopId: 7 },
    {},
    'x',
  ];
  for (const value of broken) {
    const parsed = SHARED_MODULES.loopRequest.loopInputSchema.safeParse(value);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.length).toBeGreaterThan(0);
  }
});

test('frozen, decisions of every kind parse, and bad ones are refused with issues', () => {
  const schema = SHARED_MODULES.decision.decisionSchema;
  const good = [
    { kind: 'approve', actor: 'alice' },
    { kind: 'reject', actor: 'bob', comment: 'no', escalationSequence: 2 },
    { kind: 'retry', actor: 'carol', guidance: 'handle empty input' },
    { kind: 'amend', actor: 'dan', contract: { outOfScope: ['docs/'] }, ticket: 't-1' },
  ];
  for (const decision of good) expect(schema.safeParse(decision).success).toBe(true);
  const bad = [
    { kind: 'retry', actor: 'carol', guidance: '  ' },
    { kind: 'approve', actor: '' },
    { kind: 'amend', actor: 'dan', contract: { extra: 1 } },
    null,
  ];
  for (const decision of bad) expect(schema.safeParse(decision).success).toBe(false);
  // A string format (uuid) whose check resets its RegExp before each test, twice over.
  const request = SHARED_MODULES.decision.decisionRequestSchema;
  for (let i = 0; i < 2; i++) {
    expect(request.safeParse({ kind: 'approve', escalationId: '3f1c1a9e-2d4b-4c8e-9f7a-1b2c3d4e5f60' }).success).toBe(
      true,
    );
    expect(request.safeParse({ kind: 'approve', escalationId: 'nope' }).success).toBe(false);
  }
});

test('frozen, every shared schema answers junk with issues, not a TypeError', () => {
  const schemas = Object.values(SHARED_MODULES).flatMap((module) =>
    Object.values(module).filter((value) => value instanceof z.ZodType),
  );
  expect(schemas.length).toBeGreaterThan(10);
  for (const schema of schemas) {
    for (const junk of [undefined, null, 'x', 1, [], {}, { kind: 'approve' }])
      expect(() => schema.safeParse(junk)).not.toThrow();
  }
});
