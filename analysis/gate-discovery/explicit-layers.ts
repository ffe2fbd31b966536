import { GATE_ORDER, type GateCommand } from '../../domain/gates';
import {
  parseVerificationConfig,
  VERIFICATION_CONFIG_PATH,
  VerificationConfigError,
  type VerificationConfig,
} from '../../domain/verification-config';
import type { Layer } from './layer';
import type { WorkspaceFiles } from './workspace-files';

// Layers 1 and 2: explicit commands.

export function contractLayer(contractGates: GateCommand[]): Layer {
  const layer: Layer = {};
  for (const g of contractGates) {
    layer[g.gate] ??= {
      argv: g.argv,
      timeoutSeconds: g.timeoutSeconds,
      ...(g.junitReport ? { junitReport: g.junitReport } : {}),
      detail: 'task contract (loop request gates)',
    };
  }
  return layer;
}

export function repositoryConfigLayer(config: VerificationConfig | null): Layer {
  const layer: Layer = {};
  for (const gate of GATE_ORDER) {
    const g = config?.gates[gate];
    if (g) layer[gate] = { ...g, detail: `${VERIFICATION_CONFIG_PATH} gates.${gate}` };
  }
  return layer;
}

export async function readVerificationConfig(files: WorkspaceFiles): Promise<VerificationConfig | null> {
  const file = VERIFICATION_CONFIG_PATH;
  const read = await files.read(file);
  switch (read.kind) {
    case 'absent':
      // The spec also allows a verification.md; it is prose for people, so say it was not used.
      if (await files.isFile('.ai-engineering-loop/verification.md')) {
        files.notes.push(
          '.ai-engineering-loop/verification.md is for people and is not read; gates come from verification.json',
        );
      }
      return null;
    case 'outside':
      throw new VerificationConfigError(file, 'resolves outside the workspace (symlink); refusing to read it');
    case 'unreadable':
      throw new VerificationConfigError(file, `cannot be read: ${read.reason}`);
    case 'file':
      break;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(read.text.replace(/^\uFEFF/, '')); // editors on Windows may add a BOM
  } catch (error) {
    throw new VerificationConfigError(file, `is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = parseVerificationConfig(raw);
  if (!parsed.ok) throw VerificationConfigError.fromProblems(file, parsed.problems);
  return parsed.config;
}
