// A local OpenAI-compatible endpoint (Chat Completions wire format) that answers at once.
// The reviewer's answer depends on the BENCH_MARK=<n> line the fake maker writes (bench/lib/loop-body.mjs):
// below `passAt` it reports one BLOCKER (a distinct one per iteration, so the judge iterates rather than
// escalating a repeated finding); from `passAt` on, and without a mark, a clean ledger. Triage confirms
// every finding it is asked about, like the tests' fake server (test/support/fake-llm-server.ts).
import http from 'node:http';

/** The iteration the fake maker marked in the text (the highest, should a prompt quote older ones). */
export function benchMark(text) {
  const marks = [...text.matchAll(/BENCH_MARK=(\d+)/g)].map((m) => Number(m[1]));
  return marks.length ? Math.max(...marks) : null;
}

export function blockerLedger(mark) {
  return {
    findings: [
      {
        id: 'COR-001',
        title: `bench finding for iteration ${mark}`,
        topic: 'correctness',
        severity: 'BLOCKER',
        validity: 'VALID',
        disposition: 'STRONG',
        location: { file: 'progress.txt', startLine: 1, endLine: 1 },
        acceptanceCriteria: ['AC-1'],
        evidence: `progress.txt says BENCH_MARK=${mark}`,
        failureScenario: 'the bench wants another iteration',
        reproduction: 'cat progress.txt',
        concreteAlternativeDiff: `- BENCH_MARK=${mark}\n+ BENCH_MARK=${mark + 1}`,
      },
    ],
  };
}

/** What the fake model answers to one request body (also used by the plain script, to ask the same). */
export function answerFor(body, passAt) {
  const messages = body.messages ?? [];
  if (messages[0]?.content?.startsWith('You triage')) {
    const ids = [...(messages[1]?.content ?? '').matchAll(/^## ([A-Z]{3}-\d{3}) /gm)].map((m) => m[1]);
    return {
      decisions: ids.map((findingId) => ({ findingId, validity: 'VALID', reasoning: 'confirmed by the bench' })),
    };
  }
  const mark = benchMark(messages.map((m) => m.content ?? '').join('\n'));
  return mark !== null && mark < passAt ? blockerLedger(mark) : { findings: [] };
}

export async function startFakeLlm({ passAt = 1 } = {}) {
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      requests += 1;
      let body = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        // Answered all the same.
      }
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: `chatcmpl-bench-${requests}`,
          object: 'chat.completion',
          created: 1700000000,
          model: body.model ?? 'bench',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: JSON.stringify(answerFor(body, passAt)) },
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
        }),
      );
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
