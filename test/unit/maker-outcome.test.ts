import { explainMakerRun, makerOutcomesBySequence } from '../../domain/maker-outcome';
import { parseAgentUsage } from '../../activities/makers/presets';

// Why a maker run ended, as the report and the API tell it: each outcome, the model API's status however
// the CLI words it, and the egress proxy's refusals.

const run = (outcome: string, detail: string | null = null, latencyMs: number | null = 1000) => ({
  provider: 'codex',
  outcome,
  detail,
  latencyMs,
});

test('each outcome is told in words', () => {
  expect(explainMakerRun(run('TIMED_OUT', null, 906_400), []).explanation).toBe(
    'codex timed out after 906 s and was killed.',
  );
  expect(explainMakerRun(run('EXIT_2', 'error: unexpected argument'), []).explanation).toBe(
    'codex exited with code 2. Its last output: error: unexpected argument',
  );
  expect(explainMakerRun(run('EXIT_0', 'Nothing to do.'), []).explanation).toBe(
    'codex exited 0. Its last output: Nothing to do.',
  );
  expect(explainMakerRun(run('SPAWN_FAILED', 'ENOENT: command not found: codex'), []).explanation).toBe(
    'codex could not start: ENOENT: command not found: codex.',
  );
  expect(explainMakerRun(run('CANCELLED'), []).explanation).toBe('codex was stopped: the loop was cancelled.');
  const long = explainMakerRun(run('EXIT_1', `${'x'.repeat(5000)}END`), []).explanation;
  expect(long.length).toBeLessThan(700);
  expect(long.endsWith('END')).toBe(true);
});

test("the model API's status is found however the CLI words it", () => {
  const status = (detail: string) => /HTTP (\d+)/.exec(explainMakerRun(run('EXIT_1', detail), []).explanation)?.[1];
  expect(status('API Error: 404 {"type":"error"}')).toBe('404');
  expect(status('stream error: unexpected status 401 Unauthorized')).toBe('401');
  expect(status('litellm.NotFoundError: OpenAIException - model x does not exist')).toBe('404');
  expect(status('litellm.RateLimitError: slow down')).toBe('429');
  expect(status('The model API answered HTTP 503.')).toBe('503');
  expect(status('ran 404 tests, all passed')).toBeUndefined();
});

test('refused hosts are named, and each iteration is explained by its last run', () => {
  const rows = [
    { iterationSeq: 1, kind: 'AGENT_PROCESS', ...run('TIMED_OUT') },
    { iterationSeq: 1, kind: 'EGRESS', provider: 'api.openai.com:443', outcome: 'REFUSED', detail: null, latencyMs: 0 },
    { iterationSeq: 1, kind: 'AGENT_PROCESS', ...run('EXIT_1', 'boom') },
    { iterationSeq: 2, kind: 'AGENT_PROCESS', ...run('EXIT_0', 'done') },
  ];
  const byIteration = makerOutcomesBySequence(rows);
  expect(byIteration.get(1)).toEqual({
    outcome: 'EXIT_1',
    explanation:
      'codex exited with code 1; the egress policy refused connections to api.openai.com:443. Its last output: boom',
  });
  expect(byIteration.get(2)?.outcome).toBe('EXIT_0');
});

test("Claude Code's api_error_status is read from its result", () => {
  const stdout = JSON.stringify({
    type: 'result',
    is_error: true,
    result: 'There is an issue with the model',
    api_error_status: 404,
  });
  expect(parseAgentUsage('claude-code', stdout, '')).toMatchObject({ isError: true, apiErrorStatus: 404 });
});
