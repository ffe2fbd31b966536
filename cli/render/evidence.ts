import type { EvidenceRecord } from '../api-types';
import { abnormalEnd, between, duration, tail, testCounts } from './format';

// `logs`: one evidence record (a gate or set-up run) with its stored output.

export function evidenceText(label: string, record: EvidenceRecord, tailLines: number | undefined): string {
  const facts = [
    record.exitCode !== null && record.exitCode !== undefined ? `exit ${record.exitCode}` : null,
    abnormalEnd(record.timeoutStatus),
    duration(between(record.startTime, record.endTime)),
    testCounts(record.testCounts),
  ].filter((f): f is string => Boolean(f) && f !== '-');
  const lines = [`== ${label}  ${record.status}${facts.length ? `  (${facts.join(', ')})` : ''}`];
  if (Array.isArray(record.command) && record.command.length)
    lines.push(`$ ${record.command.map(shellWord).join(' ')}`);
  if (record.failureReason) lines.push(`failure: ${record.failureReason}`);
  lines.push(stream('stdout', record.stdout, record.stdoutBytes, record.outputTruncated, tailLines));
  lines.push(stream('stderr', record.stderr, record.stderrBytes, record.outputTruncated, tailLines));
  return lines.join('\n');
}

function stream(
  name: string,
  text: string | undefined,
  bytes: number | undefined,
  truncated: boolean | undefined,
  tailLines: number | undefined,
): string {
  if (!text) return `--- ${name}: empty`;
  const notes = [
    bytes !== undefined ? `${bytes} bytes` : null,
    truncated ? 'stored output capped' : null,
    tailLines ? `last ${tailLines} lines` : null,
  ].filter(Boolean);
  return `--- ${name}${notes.length ? ` (${notes.join(', ')})` : ''}\n${tailLines ? tail(text, tailLines) : text.replace(/\n$/, '')}`;
}

/** An argv word as a shell would need it quoted, for reading (the service runs commands without a shell). */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
