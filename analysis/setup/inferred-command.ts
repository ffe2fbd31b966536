import { DEFAULT_SETUP_TIMEOUT_SECONDS, type SetupPlan } from '../../domain/setup';

// What every ecosystem's set-up inference shares (infer-setup.ts, python-setup.ts).

/** Whether an optional tool (uv, bun, poetry) is installed on the worker. */
export type Installed = (tool: string) => boolean;

/** A set-up command inferred from the repository's manifests, with why it was chosen. */
export function addInferred(plan: SetupPlan, argv: string[], detail: string): void {
  plan.commands.push({ argv, timeoutSeconds: DEFAULT_SETUP_TIMEOUT_SECONDS, source: 'manifest-inference', detail });
}
