import type { AgentView } from '../api-types';
import { duration, table } from './format';

// `engineering-loop agents`: the presets in a table, then why each failed check failed.

export function agentTable(agents: readonly AgentView[]): string {
  const rows = agents.map((a) => [
    a.backend,
    `${a.package}@${a.pinnedVersion}`,
    a.installedVersion ?? 'not installed',
    a.endpoint ? endpointText(a.endpoint) : '?',
    a.allowed ? 'yes' : 'no',
    a.lastCheck
      ? `${a.lastCheck.ok ? 'ok' : 'FAILED'} ${duration(a.lastCheck.latencyMs)} (${a.lastCheck.checkedAt})`
      : 'never checked',
  ]);
  const failures = agents.flatMap((a) =>
    a.lastCheck && !a.lastCheck.ok ? [`${a.backend}: ${a.lastCheck.explanation}`] : [],
  );
  return [table(['PRESET', 'PINNED', 'INSTALLED', 'ENDPOINT', 'ALLOWED', 'LAST CHECK'], rows), ...failures].join('\n');
}

function endpointText(e: NonNullable<AgentView['endpoint']>): string {
  const where = e.baseUrl ?? 'CLI default';
  return `${where}${e.model ? ` (${e.model})` : ''}${e.apiKeySet ? '' : ', no key'}`;
}
