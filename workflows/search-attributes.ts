import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// Search attributes that make loops findable in the Temporal Web UI; kept current by the workflow.
export const LoopStatusKey = defineSearchAttributeKey('LoopStatus', SearchAttributeType.KEYWORD);
export const LoopPhaseKey = defineSearchAttributeKey('LoopPhase', SearchAttributeType.KEYWORD);
export const LoopIterationKey = defineSearchAttributeKey('LoopIteration', SearchAttributeType.INT);
export const LoopVerdictKey = defineSearchAttributeKey('LoopVerdict', SearchAttributeType.KEYWORD);
export const LoopRepoKey = defineSearchAttributeKey('LoopRepo', SearchAttributeType.KEYWORD);
/** The pull/merge request delivery opened. */
export const LoopPullRequestKey = defineSearchAttributeKey('LoopPullRequest', SearchAttributeType.KEYWORD);
/** NONE, TARGETED or MAJOR: the passed change's context impact, read before delivery. */
export const LoopContextImpactKey = defineSearchAttributeKey('LoopContextImpact', SearchAttributeType.KEYWORD);

export const LOOP_SEARCH_ATTRIBUTE_KEYS = [
  LoopStatusKey,
  LoopPhaseKey,
  LoopIterationKey,
  LoopVerdictKey,
  LoopRepoKey,
  LoopPullRequestKey,
  LoopContextImpactKey,
];
