// Custom search attributes every loop workflow sets, so loops can be listed and filtered in the
// Temporal UI/CLI. Types use the Temporal CLI spelling (`--search-attribute Name=Type`).
// Pure data (no Node APIs): workflow code may import it.
export const LOOP_SEARCH_ATTRIBUTES = {
  LoopStatus: 'Keyword',
  LoopPhase: 'Keyword',
  LoopIteration: 'Int',
  LoopVerdict: 'Keyword',
  LoopRepo: 'Keyword',
  LoopPullRequest: 'Keyword',
  LoopContextImpact: 'Keyword',
} as const satisfies Record<string, 'Keyword' | 'Int'>;

export type LoopSearchAttributeName = keyof typeof LOOP_SEARCH_ATTRIBUTES;
