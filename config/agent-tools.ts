import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { PRESET_BACKENDS, type PresetBackend } from '../domain/maker-presets';
import { PROJECT_ROOT } from './project-root';

// The coding-agent CLIs the presets run, pinned in config/agent-tools.json and installed by
// scripts/install-agents.sh (docs/agents.md, "Installing the CLIs"): which package and version each preset
// expects, and which version is installed in a tools directory — read from the package's own metadata,
// so listing them runs nothing.

const pinSchema = z.strictObject({
  registry: z.enum(['npm', 'pypi']),
  package: z.string().min(1),
  version: z.string().min(1),
  bin: z.string().min(1),
});
export type AgentToolPin = z.infer<typeof pinSchema>;

const PINS_FILE = path.join(PROJECT_ROOT, 'config', 'agent-tools.json');

/** Every preset's pin; a preset without one is a mistake in the repository, not the operator's. */
export const AGENT_TOOL_PINS: Readonly<Record<PresetBackend, AgentToolPin>> = z
  .strictObject(
    Object.fromEntries(PRESET_BACKENDS.map((b) => [b, pinSchema])) as Record<PresetBackend, typeof pinSchema>,
  )
  .parse(JSON.parse(fs.readFileSync(PINS_FILE, 'utf8')));

/** The version of `backend`'s package installed under `toolsDir`, or null when it is not installed there. */
export function installedVersion(toolsDir: string, backend: PresetBackend): string | null {
  const pin = AGENT_TOOL_PINS[backend];
  return pin.registry === 'npm' ? npmVersion(toolsDir, pin.package) : pypiVersion(toolsDir, backend, pin.package);
}

function npmVersion(toolsDir: string, pkg: string): string | null {
  try {
    const manifest = JSON.parse(
      fs.readFileSync(path.join(toolsDir, 'npm', 'node_modules', pkg, 'package.json'), 'utf8'),
    );
    return typeof manifest.version === 'string' ? manifest.version : null;
  } catch {
    return null;
  }
}

// pip records an installed distribution as <name>-<version>.dist-info, the name normalised (PEP 503, with _).
function pypiVersion(toolsDir: string, venv: string, pkg: string): string | null {
  const prefix = `${pkg.toLowerCase().replace(/[-_.]+/g, '_')}-`;
  const lib = path.join(toolsDir, venv, 'lib');
  try {
    for (const python of fs.readdirSync(lib)) {
      for (const entry of fs.readdirSync(path.join(lib, python, 'site-packages'))) {
        if (entry.toLowerCase().startsWith(prefix) && entry.endsWith('.dist-info'))
          return entry.slice(prefix.length, -'.dist-info'.length);
      }
    }
  } catch {
    return null;
  }
  return null;
}
