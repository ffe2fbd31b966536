import {
  GATE_ORDER,
  GATE_SOURCES,
  MAX_COMMAND_TIMEOUT_SECONDS,
  type GateSource,
  type ResolvedGate,
} from '../../domain/gates';
import { DEFAULT_GATE_TIMEOUT_SECONDS } from '../../domain/verification-config';
import type { Layer } from './layer';

// Resolution: for each gate, the most specific layer that proposes it wins; timeouts are clamped to the ceiling.

export function resolveByPrecedence(layers: Record<GateSource, Layer>, notes: string[]): ResolvedGate[] {
  const gates: ResolvedGate[] = [];
  for (const gate of GATE_ORDER) {
    const source = GATE_SOURCES.find((s) => layers[s][gate]);
    if (!source) continue;
    const proposal = layers[source][gate]!;
    const requested = proposal.timeoutSeconds ?? DEFAULT_GATE_TIMEOUT_SECONDS;
    // The ceiling is global (docs/design.md §3.2): clamp rather than fail, and say so.
    const timeoutSeconds = Math.min(requested, MAX_COMMAND_TIMEOUT_SECONDS);
    if (timeoutSeconds < requested) {
      notes.push(
        `${gate}: timeout ${requested}s from ${source} clamped to the ${MAX_COMMAND_TIMEOUT_SECONDS}s ceiling`,
      );
    }
    gates.push({
      gate,
      argv: proposal.argv,
      timeoutSeconds,
      source,
      detail: proposal.detail,
      ...(proposal.junitReport ? { junitReport: proposal.junitReport } : {}),
    });
  }
  return gates;
}
