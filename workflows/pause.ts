import { ApplicationFailure, condition, setCurrentDetails, setHandler } from '@temporalio/workflow';
import { currentDetails } from './details';
import type { LoopRun } from './loop-run';
import { INVALID_PAUSE, pauseUpdate, resumeUpdate, type PauseReceipt } from './messages';

// Pause and resume (docs/design.md §7.4): a person's pause lets the loop finish its current step — a maker,
// a verification, a review, a decision being awaited — and hold, durably, before its next maker.

const MAX_ACTOR = 200;
const MAX_REASON = 2000;

export function handlePause(run: LoopRun): void {
  setHandler(
    pauseUpdate,
    ({ actor, reason }) => {
      run.state.pause ??= { actor, reason: reason ?? null, requestedAt: new Date().toISOString() };
      setCurrentDetails(currentDetails(run.state));
      return receipt(run);
    },
    {
      validator: ({ actor, reason }) => {
        checkActor(actor);
        if (reason != null && (typeof reason !== 'string' || reason.length > MAX_REASON))
          throw ApplicationFailure.create({
            type: INVALID_PAUSE,
            message: `reason must be text of at most ${MAX_REASON} characters`,
          });
      },
    },
  );
  setHandler(
    resumeUpdate,
    () => {
      run.state.pause = null;
      setCurrentDetails(currentDetails(run.state));
      return receipt(run);
    },
    { validator: ({ actor }) => checkActor(actor) },
  );
}

/** Before a maker: while a pause stands, the loop holds (status PAUSED, in its current phase). */
export async function holdIfPaused(run: LoopRun): Promise<void> {
  if (!run.state.pause) return;
  const { phase } = run.state;
  await run.transition('PAUSED', phase);
  await condition(() => !run.state.pause);
  await run.transition('RUNNING', phase);
}

function receipt(run: LoopRun): PauseReceipt {
  return { paused: !!run.state.pause, holding: run.state.status === 'PAUSED' };
}

function checkActor(actor: unknown): void {
  if (typeof actor !== 'string' || !actor.trim() || actor.length > MAX_ACTOR)
    throw ApplicationFailure.create({
      type: INVALID_PAUSE,
      message: `actor must be a non-empty name of at most ${MAX_ACTOR} characters`,
    });
}
