import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { Decision } from '../domain/decision';
import type { LoopState } from '../domain/loop-state';

// Messages shared by the workflow and its clients (API, Temporal CLI/UI).

/** A human decision on an open escalation. Sent by the API, or by hand from the Temporal CLI/UI. */
export const decisionSignal = defineSignal<[Decision]>('decision');

export const loopStateQuery = defineQuery<LoopState>('loopState');
