import fs from 'node:fs';
import path from 'node:path';

// Language toolchains often live outside /usr (rustup and pyenv under $HOME, Go in /usr/local/go):
// their directories are made visible read-only, and the variables that locate them are passed in,
// because HOME inside the sandbox is a fresh directory.

const SYSTEM_PREFIXES = ['/usr/', '/bin', '/sbin', '/lib', '/etc/'];

export interface Toolchains {
  paths: string[];
  env: Record<string, string>;
}

export function toolchainPaths(env: NodeJS.ProcessEnv): Toolchains {
  const paths = new Set<string>();
  const vars: Record<string, string> = {};
  for (const entry of (env.PATH ?? '').split(':').filter((p) => path.isAbsolute(p))) {
    if (SYSTEM_PREFIXES.some((prefix) => entry === prefix.replace(/\/$/, '') || entry.startsWith(prefix))) continue;
    // `…/bin` and `…/shims` are launchers for the tree above them (pyenv versions, cargo, Go).
    const root = ['bin', 'shims'].includes(path.basename(entry)) ? path.dirname(entry) : entry;
    if (fs.existsSync(root)) paths.add(root);
  }
  const home = env.HOME;
  const rustup = env.RUSTUP_HOME ?? (home ? path.join(home, '.rustup') : undefined);
  if (rustup && fs.existsSync(rustup)) {
    paths.add(rustup);
    vars.RUSTUP_HOME = rustup;
  }
  const pyenv = env.PYENV_ROOT ?? (home ? path.join(home, '.pyenv') : undefined);
  if (pyenv && fs.existsSync(pyenv)) {
    paths.add(pyenv);
    vars.PYENV_ROOT = pyenv;
  }
  for (const name of ['GOROOT', 'JAVA_HOME'] as const) {
    const value = env[name];
    if (value && fs.existsSync(value)) {
      paths.add(value);
      vars[name] = value;
    }
  }
  // Nested roots are covered by their parent's mount.
  const sorted = [...paths].sort();
  return { paths: sorted.filter((p) => !sorted.some((q) => q !== p && p.startsWith(`${q}/`))), env: vars };
}
