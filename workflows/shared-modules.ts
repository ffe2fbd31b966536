import * as backtrack from '../domain/backtrack';
import * as budget from '../domain/budget';
import * as contract from '../domain/contract';
import * as decision from '../domain/decision';
import * as gates from '../domain/gates';
import * as judge from '../domain/judge';
import * as ledger from '../domain/ledger';
import * as loopRequest from '../domain/loop-request';
import * as proof from '../domain/proof';
import * as reviewLimits from '../domain/review-limits';
import * as setup from '../domain/setup';

// Evaluated once per worker, before any loop, and shared by every loop in the worker's V8 context (the
// bundler's preloadModules, service/workflow-bundle.ts). Evaluated per loop instead, the domain's zod
// schemas cost each cached loop about 4 MB and each new or replayed loop about 17 ms. Sharing is safe
// because these modules hold no per-loop state: immutable schemas and pure functions.
export const SHARED_MODULES = {
  backtrack,
  budget,
  contract,
  decision,
  gates,
  judge,
  ledger,
  loopRequest,
  proof,
  reviewLimits,
  setup,
};

prepareForFreezing(SHARED_MODULES, new WeakSet());

/**
 * The SDK deep-freezes shared modules; two things in zod schemas must not be frozen, so they are
 * changed here, before the freeze:
 * - an object schema computes its `shape` on first read by redefining the property (and a schema derived
 *   from it, by `.strict()` or `.extend()`, keeps a getter that redefines its parent's): computed now and
 *   stored as a plain value;
 * - a string check resets its RegExp's `lastIndex` before each test: each read gets a fresh RegExp.
 */
function prepareForFreezing(value: unknown, seen: WeakSet<object>): void {
  if (value === null || typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  for (const key of Reflect.ownKeys(value)) {
    const property = Object.getOwnPropertyDescriptor(value, key);
    const configurable = property?.configurable === true;
    if (configurable && key === 'shape' && property.get) {
      Object.defineProperty(value, key, {
        value: (value as { shape: unknown }).shape,
        enumerable: true,
        configurable: true,
        writable: true,
      });
    }
    const current: unknown = (value as Record<string | symbol, unknown>)[key];
    if (configurable && current instanceof RegExp) {
      const { source, flags } = current;
      Object.defineProperty(value, key, {
        get: () => new RegExp(source, flags),
        enumerable: property.enumerable,
        configurable: true,
      });
    } else {
      prepareForFreezing(current, seen);
    }
  }
}
