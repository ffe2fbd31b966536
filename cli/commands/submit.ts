import { z } from 'zod';
import type { SubmittedLoop } from '../api-types';
import { defineCommand } from '../command';
import { readObjectFile } from '../input-file';
import { durationOption, textOption } from '../inputs';
import { followLoop } from '../watch/follow';
import { DEFAULT_WATCH_TIMEOUT_MS } from '../watch/reconnect';
import { MAX_WATCH_TIMEOUT_MS, timeoutOption } from './watch';

export const submitCommand = defineCommand({
  name: 'submit',
  summary: 'Submit a loop request (JSON or YAML file) and print its id and URL',
  positionals: ['file'],
  usage: '<file.json|file.yaml> [--idempotency-key K] [--watch [--timeout DURATION]]',
  details: [
    'The file holds the body of POST /v1/loops (repository, contract, maker, gates, …; see the README).',
    'JSON for .json, YAML for .yaml/.yml, otherwise judged by its content.',
    '',
    'examples:',
    '  engineering-loop submit task.yaml --watch',
    '  engineering-loop submit task.json --idempotency-key task-1',
  ].join('\n'),
  options: {
    'idempotency-key': {
      type: 'string',
      value: 'K',
      description: 'the same key returns the same loop instead of starting another',
    },
    watch: { type: 'boolean', description: 'then follow the loop like `watch` (and exit with its code)' },
    timeout: timeoutOption,
  },
  input: z.object({
    file: z.string().min(1, { error: 'must name a file' }),
    'idempotency-key': textOption(200),
    watch: z.boolean().optional(),
    timeout: durationOption(MAX_WATCH_TIMEOUT_MS),
  }),
  run: async (input, ctx) => {
    const body = readObjectFile(input.file, 'loop file');
    const api = ctx.api();
    const key = input['idempotency-key'];
    const answer = await api.post<SubmittedLoop>('/v1/loops', body, { headers: key ? { 'idempotency-key': key } : {} });
    const loop = answer.body;
    if (ctx.json) {
      ctx.io.out(JSON.stringify(loop));
    } else {
      const how =
        answer.status === 201 ? 'submitted' : `already submitted with idempotency key ${JSON.stringify(key)}:`;
      ctx.io.out(`${how} loop ${loop.id} (${loop.status})`);
      ctx.io.out(`  ${api.url(`/v1/loops/${loop.id}`)}`);
      for (const note of loop.notes ?? []) ctx.io.out(`  note: ${note}`);
      if (!input.watch) ctx.io.out(`  follow it: engineering-loop watch ${loop.id}`);
    }
    return input.watch ? followLoop(loop.id, ctx, input.timeout ?? DEFAULT_WATCH_TIMEOUT_MS) : 0;
  },
});
