import { WorkflowUpdateFailedError } from '@temporalio/client';
import { pauseUpdate, resumeUpdate } from '../../workflows/messages';
import { loopInput } from './support/loop-input';
import { gateFailed } from './support/loop-results';
import { loopTestEnvironment } from './support/test-environment';

// Pause and resume: a paused loop finishes its current step and holds before its next maker until resumed,
// across a person's retry too.

const loops = loopTestEnvironment();

const ANA = 'ana (key k1)';

test('paused during a maker: the iteration finishes, the loop holds before the next maker, and goes on when resumed', async () => {
  let releaseMaker!: () => void;
  const makerHeldUntil = new Promise<void>((resolve) => (releaseMaker = resolve));
  await loops.run(
    { iterations: [{ makerHeldUntil, verification: gateFailed(1) }, {}] },
    loopInput(),
    async ({ handle, activities, state }) => {
      await activities.called('runMaker', () => true);
      await expect(
        handle.executeUpdate(pauseUpdate, { args: [{ actor: ANA, reason: 'reviewing the plan' }] }),
      ).resolves.toEqual({ paused: true, holding: false });
      // Pausing again changes nothing.
      await expect(handle.executeUpdate(pauseUpdate, { args: [{ actor: 'someone else' }] })).resolves.toEqual({
        paused: true,
        holding: false,
      });
      releaseMaker();

      await activities.called('recordProgress', (p) => p.status === 'PAUSED');
      const held = await state();
      expect(held).toMatchObject({
        status: 'PAUSED',
        phase: 'JUDGE',
        lastVerdict: 'ITERATE',
        pause: { actor: ANA, reason: 'reviewing the plan' },
      });
      expect(activities.inputsOf('runMaker')).toHaveLength(1);
      // The Web UI's current details say who paused it and how to resume.
      const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      expect(metadata.currentDetails).toContain(
        `Paused by ${ANA} (reviewing the plan): resume with POST /v1/loops/${held.loopId}/resume.`,
      );

      await expect(handle.executeUpdate(resumeUpdate, { args: [{ actor: ANA }] })).resolves.toEqual({
        paused: false,
        holding: true,
      });
      await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 2 });
      expect(
        activities
          .inputsOf('recordProgress')
          .filter((p) => p.status === 'PAUSED' || (p.status === 'RUNNING' && p.phase === 'JUDGE'))
          .map((p) => [p.status, p.phase]),
      ).toEqual([
        ['PAUSED', 'JUDGE'],
        ['RUNNING', 'JUDGE'],
      ]);
    },
  );
});

test('a pause without an actor is refused by the validator, and nothing changes', async () => {
  let releaseMaker!: () => void;
  const makerHeldUntil = new Promise<void>((resolve) => (releaseMaker = resolve));
  await loops.run({ iterations: [{ makerHeldUntil }] }, loopInput(), async ({ handle, activities, state }) => {
    await activities.called('runMaker', () => true);
    const refused = await handle.executeUpdate(pauseUpdate, { args: [{ actor: ' ' }] }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((refused as WorkflowUpdateFailedError).cause?.message).toBe(
      'actor must be a non-empty name of at most 200 characters',
    );
    expect((await state()).pause).toBeNull();
    releaseMaker();
    await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED' });
  });
});

test('a pause that stands when a person sends the loop back holds the next run before its maker', async () => {
  await loops.run(
    { iterations: [{ verification: gateFailed(1) }, {}] },
    loopInput({ maxIterations: 1 }),
    async ({ handle, activities, awaitingDecision, decide, state }) => {
      await awaitingDecision();
      await handle.executeUpdate(pauseUpdate, { args: [{ actor: ANA }] });
      await decide({ kind: 'retry', actor: ANA, guidance: 'handle negatives', ticket: 'dt_ticket' });
      await activities.called('recordProgress', (p) => p.status === 'PAUSED');
      expect(await state()).toMatchObject({ status: 'PAUSED', pause: { actor: ANA } });
      expect(activities.inputsOf('runMaker')).toHaveLength(1);
      await handle.executeUpdate(resumeUpdate, { args: [{ actor: ANA }] });
      await expect(handle.result()).resolves.toMatchObject({ status: 'PASSED', iterations: 2 });
    },
  );
});
