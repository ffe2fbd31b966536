// Sanitiser throughput on 1 MiB of adversarial input per pattern (the inputs of test/unit/sanitise.test.ts
// that would make a backtracking pattern rescan), plus ordinary output. Not a test: figures vary by
// machine. Run after `npm run build`: `npm run bench:sanitiser`. Writes bench/results/sanitiser.json.
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';

const dist = new URL('../dist/domain/sanitise.js', import.meta.url);
if (!fs.existsSync(dist)) {
  console.error('dist/domain/sanitise.js is missing: run `npm run build` first');
  process.exit(1);
}
// dist is CommonJS: its exports arrive as the default export.
const { default: sanitiser } = await import(dist.href);

const MiB = 1024 * 1024;
const RUNS = 9;

const INPUTS = {
  'PEM BEGIN without END': '-----BEGIN RSA PRIVATE KEY-----',
  'PEM END without BEGIN': '-----END RSA PRIVATE KEY-----',
  'URL https://a:': 'https://a:',
  'URL a.a.a.': 'a.',
  'Authorization Bearer ': 'Bearer ',
  'sk- run': 'sk-',
  'ghp_ prefixes': 'ghp_',
  'AKIA prefixes': 'AKIA',
  'JWT -eyJ': '-eyJ',
  'AWS secret 40-char soup': 'AbCdEfGhIj0123456789/+AbCdEfGhIj01234567 ',
  'assignment 1-1-1-': '1-',
  'assignment a:a:a:': 'a:',
  'assignment password=': 'password=',
  'assignment secretsecret': 'secret',
  'ordinary test output':
    'PASS test/unit/judge.test.ts (12 ms)\n  ✓ escalates when a BLOCKER is open (3 ms)\nexport DB_PASSWORD=hunter2hunter2\n',
};

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function measure(fn, input) {
  fn(input); // warm-up: compile the patterns and let the JIT settle
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    fn(input);
    times.push(performance.now() - started);
  }
  const ms = median(times);
  return { medianMs: Number(ms.toFixed(2)), mibPerSecond: Number((input.length / MiB / (ms / 1000)).toFixed(1)) };
}

const results = Object.entries(INPUTS).map(([name, unit]) => {
  const input = unit.repeat(Math.ceil(MiB / unit.length)).slice(0, MiB);
  return {
    input: name,
    sanitise: measure(sanitiser.sanitise, input),
    sanitiseTokens: measure(sanitiser.sanitiseTokens, input),
  };
});

const report = {
  node: process.version,
  platform: `${process.platform}/${process.arch}`,
  date: new Date().toISOString(),
  inputBytes: MiB,
  runs: RUNS,
  statistic: 'median',
  results,
};
fs.mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
fs.writeFileSync(new URL('./results/sanitiser.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`);

console.log(`Sanitiser on 1 MiB per input, median of ${RUNS} runs (${report.node}, ${report.platform})\n`);
console.log('| input | sanitise ms | sanitise MiB/s | sanitiseTokens ms | sanitiseTokens MiB/s |');
console.log('|---|---:|---:|---:|---:|');
for (const r of results) {
  console.log(
    `| ${r.input} | ${r.sanitise.medianMs} | ${r.sanitise.mibPerSecond} | ${r.sanitiseTokens.medianMs} | ${r.sanitiseTokens.mibPerSecond} |`,
  );
}
