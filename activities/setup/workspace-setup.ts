import type { ActivityDeps } from '../deps';
import { discardSetupEvidence } from '../../store/evidence';
import { loopById } from '../../store/loops';
import { runSetupCommands, setupPlanOf, type SetupOutcome } from './run-setup';

// The SETUP phase: dependencies installed in the maker's workspace, so an agent can run the tests. Runs
// once after the workspace is prepared, again when an iteration changed a manifest or lockfile, and again
// when a human retries after an ENVIRONMENT escalation. Gates never use these: every verification sets up
// its own fresh checkout of the checkpoint (run-verification.ts), which the maker cannot have touched.

export interface WorkspaceSetupInput {
  loopId: string;
  /** Distinguishes this run's evidence (`workspace-setup:<key>:<n>`) from earlier runs of the loop's set-up. */
  key: string;
}

export async function runWorkspaceSetup(deps: ActivityDeps, input: WorkspaceSetupInput): Promise<SetupOutcome> {
  const loop = await loopById(deps.prisma, input.loopId);
  const plan = setupPlanOf(loop.gatePlan);
  if (!plan || !loop.workspacePath) return { problem: null, evidenceIds: [] };
  const prefix = `workspace-setup:${input.key}`;
  // Evidence of an interrupted attempt is replaced: this attempt runs every command again.
  await discardSetupEvidence(deps.prisma, input.loopId, `${prefix}:`);
  return runSetupCommands(deps, {
    loopId: input.loopId,
    iterationId: null,
    iterationSeq: null,
    prefix,
    workDir: loop.workspacePath,
    readOnlyInWorkDir: ['.git'],
    readOnly: [],
    plan,
    repoUrl: loop.repoUrl,
    phase: 'setup',
  });
}
