import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, type WorkerOptions } from '@temporalio/worker';
import { z } from 'zod';
import { PROJECT_ROOT } from '../config/project-root';

// The workflow code a worker runs, bundled once by `npm run build` (dist/workflow-bundle.js) so a
// restarted worker polls within a second or two instead of spending ~5 s in webpack first. A manifest
// beside it holds the hash of every project module in the bundle: a bundle older than the compiled
// code it came from (someone ran tsc alone) is never used; the worker bundles at start instead.

/**
 * Workflow interceptor modules every bundle includes (resolved paths): the same bundle whether a process
 * traces or not — the tracing interceptors stay inert in workflows started without trace context.
 */
export const WORKFLOW_INTERCEPTOR_MODULES: string[] = [require.resolve('../telemetry/workflow-interceptors')];

const WORKFLOWS_PATH = require.resolve('../workflows');

/**
 * Modules evaluated once per worker and shared by every loop in its V8 context, instead of once per
 * loop (see workflows/shared-modules.ts): measured 4.3 MB and 17 ms per loop before, 25 KB and 0.1 ms after.
 */
export const WORKFLOW_PRELOAD_MODULES: string[] = [require.resolve('../workflows/shared-modules')];

/** How every bundle of the loop's workflow code is made: the build's, a worker's at start, the replay tests'. */
export const WORKFLOW_BUNDLE_OPTIONS = {
  workflowsPath: WORKFLOWS_PATH,
  workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
  preloadModules: WORKFLOW_PRELOAD_MODULES,
};
const BUNDLE_FILE = path.join(PROJECT_ROOT, 'dist', 'workflow-bundle.js');
const MANIFEST_FILE = path.join(PROJECT_ROOT, 'dist', 'workflow-bundle.json');

const manifestSchema = z.object({ modules: z.record(z.string(), z.string()) });

/** Bundles the workflow code into dist/ with its manifest. Run by `npm run build`, from dist. */
export async function writeWorkflowBundle(): Promise<{ bytes: number; modules: number }> {
  const { code } = await bundleWorkflowCode({ ...WORKFLOW_BUNDLE_OPTIONS, logger: warningsOnly });
  const modules = Object.fromEntries(projectModules(code).map((file) => [file, fileHash(file)]));
  fs.writeFileSync(BUNDLE_FILE, code);
  fs.writeFileSync(MANIFEST_FILE, `${JSON.stringify({ modules }, null, 2)}\n`);
  return { bytes: code.length, modules: Object.keys(modules).length };
}

/**
 * The worker's workflow code: the prebuilt bundle when it matches the compiled code on disk, else the
 * workflows themselves (bundled at start; also how tests running from sources get theirs).
 */
export function workflowCode(log: (line: string) => void): WorkflowCode {
  const stale = staleModule();
  // The bundle has its interceptors built in; naming them again only makes the SDK warn.
  if (stale === null) return { workflowBundle: { codePath: BUNDLE_FILE }, workflowModules: [] };
  if (stale !== 'absent')
    log(`the prebuilt workflow bundle is older than ${stale}; bundling the workflow code at start (run npm run build)`);
  return {
    workflowsPath: WORKFLOWS_PATH,
    workflowModules: WORKFLOW_INTERCEPTOR_MODULES,
    bundlerOptions: { preloadModules: WORKFLOW_PRELOAD_MODULES },
  };
}

export type WorkflowCode = Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions'> & {
  workflowModules: string[];
};

/** webpack's progress is noise in a build log; its warnings and errors are not. */
const warningsOnly = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string, meta?: unknown) => console.warn(message, meta ?? ''),
  error: (message: string, meta?: unknown) => console.error(message, meta ?? ''),
};

/** 'absent' without a prebuilt bundle for this code, the first module that changed since it was built, or null when current. */
function staleModule(): string | null {
  // Running from sources (ts-jest, ts-node): dist's bundle was built from other files.
  if (!WORKFLOWS_PATH.startsWith(path.join(PROJECT_ROOT, 'dist') + path.sep)) return 'absent';
  if (!fs.existsSync(BUNDLE_FILE) || !fs.existsSync(MANIFEST_FILE)) return 'absent';
  const manifest = manifestSchema.safeParse(JSON.parse(fs.readFileSync(MANIFEST_FILE, 'utf8')));
  if (!manifest.success) return MANIFEST_FILE;
  for (const [file, hash] of Object.entries(manifest.data.modules)) {
    if (!fs.existsSync(path.join(PROJECT_ROOT, file)) || fileHash(file) !== hash) return file;
  }
  return null;
}

/** Project files webpack put in the bundle, relative to the project root (its module ids are relative to the working directory). */
export function projectModules(code: string): string[] {
  const ids = code.match(/"\.{1,2}\/[^"\n]+\.(?:js|cjs|ts)"/g) ?? [];
  const files = ids.map((id) => path.relative(PROJECT_ROOT, path.resolve(id.slice(1, -1))));
  return [...new Set(files)]
    .filter(
      (file) =>
        !file.startsWith('..') && !file.includes('node_modules') && fs.existsSync(path.join(PROJECT_ROOT, file)),
    )
    .sort();
}

/** sha256 of a project file (path relative to the project root). */
export function fileHash(file: string): string {
  return createHash('sha256')
    .update(fs.readFileSync(path.join(PROJECT_ROOT, file)))
    .digest('hex');
}
