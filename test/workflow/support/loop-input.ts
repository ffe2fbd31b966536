import { randomUUID } from 'node:crypto';
import { loopInputSchema, type LoopInput, type LoopRequestBody } from '../../../domain/loop-request';
import { loopRequest } from '../../support/loop-request';

// The workflow's input as the API starts it: the end-to-end tests' request (AC-1 proven by a test named
// "sum adds two numbers", AC-2 by the tests gate), with the schema's defaults applied.

export const REPOSITORY = '/srv/repositories/sum';

export function loopInput(overrides: Partial<LoopRequestBody> = {}): LoopInput {
  return loopInputSchema.parse({ loopId: randomUUID(), request: loopRequest(REPOSITORY, ['fix-sum'], overrides) });
}
