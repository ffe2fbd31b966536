import type { GateName } from '../../domain/gates';

/** What one layer proposes for a gate, before precedence and ceilings. */
export interface Proposal {
  argv: string[];
  timeoutSeconds?: number;
  detail: string;
  junitReport?: string;
}
export type Layer = Partial<Record<GateName, Proposal>>;
