import { AsyncLocalStorage } from 'node:async_hooks';
import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';

/**
 * The active OpenTelemetry context carried across awaits by AsyncLocalStorage — what
 * @opentelemetry/context-async-hooks does, in the few lines the service needs (functions, not event
 * emitters), so a span started in an HTTP request is the parent of the Temporal calls made for it.
 */
export class AsyncLocalStorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(context, () => fn.apply(thisArg, args));
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const run = (self: unknown, args: unknown[]): unknown =>
      this.with(context, () => (target as (...a: unknown[]) => unknown).apply(self, args));
    return function (this: unknown, ...args: unknown[]) {
      return run(this, args);
    } as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}
