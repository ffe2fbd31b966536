// Each bench writes bench/results/<name>.json: when, on what machine, under what load, its settings,
// its figures, and `summary` — the Markdown section bench/run.mjs puts into bench/results/SUMMARY.md.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startCpuAccount } from './proc.mjs';
import { loadavg, machine } from './util.mjs';

export const resultsDir = new URL('../results/', import.meta.url);

/** Call at the start: remembers the load then; `write` adds the load at the end. */
export function startResult(name) {
  const startedAt = new Date();
  const loadAtStart = loadavg();
  const cpu = startCpuAccount();
  return {
    loadAtStart,
    write(settings, figures, summaryLines) {
      const loadAtEnd = loadavg();
      const m = machine();
      const used = cpu();
      const header =
        `_${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${Math.round(used.seconds)} s; ` +
        `${m.cpus} cores (${m.cpu}), ${m.memoryGiB} GiB, Node ${m.node}; load average ${loadAtStart.join(' ')} at start, ${loadAtEnd.join(' ')} at end ` +
        `(the bench's own processes count too); other work took ${used.otherCoreSeconds} of the ${Math.round(used.seconds * m.cpus)} core-seconds ` +
        `(the bench ${used.benchCoreSeconds})._`;
      const result = {
        bench: name,
        measuredAt: startedAt.toISOString(),
        seconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
        machine: { ...m, loadavgAtStart: loadAtStart, loadavgAtEnd: loadAtEnd, cpu: used },
        settings,
        ...figures,
        summary: [header, '', ...summaryLines].join('\n'),
      };
      fs.mkdirSync(resultsDir, { recursive: true });
      const file = new URL(`${name}.json`, resultsDir);
      fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
      console.log(`\n${result.summary}\n\nWritten to ${fileURLToPath(file)}`);
      return result;
    },
  };
}

/** A Markdown table from a header row and rows. */
export function table(header, rows, align = header.map((_, i) => (i === 0 ? '---' : '---:'))) {
  return [
    `| ${header.join(' | ')} |`,
    `|${align.join('|')}|`,
    ...rows.map((r) => `| ${r.map((c) => (c == null ? '–' : c)).join(' | ')} |`),
  ];
}
