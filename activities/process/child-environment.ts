// Gate and agent commands run code the loop does not trust (the maker's changes, the target repo's
// scripts), so they get an allow-list of the service's environment, never a copy with secrets
// removed: DATABASE_URL, LLM_API_KEY, TEMPORAL_* and whatever else the service holds stay out.

// Enough for node, npm and git: PATH to find them, HOME for their config and caches, USER/LOGNAME
// for git's identity fallback, locale and timezone for stable output, TMPDIR for temp files,
// TERM for tools that look at it. SHELL is left out: npm runs scripts with /bin/sh regardless.
const INHERITED_VARIABLES = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'TERM',
] as const;

export function childEnvironment(
  extra: Record<string, string> = {},
  parent: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const inherited: Record<string, string> = {};
  for (const name of INHERITED_VARIABLES) {
    const value = parent[name];
    if (value !== undefined) inherited[name] = value;
  }
  // CI=true makes runners non-interactive (no watch mode, no prompts, no TTY-only output).
  return { ...inherited, CI: 'true', ...extra };
}
