import fs from 'node:fs';
import path from 'node:path';
import { loopRequestSchema } from '../../domain/loop-request';
import { describeIssues } from '../../domain/ledger';

// The documents people read first stay usable: every relative link leads to a file (and heading) that
// exists, and the README's example requests are loops the API would accept.

const ROOT = path.resolve(__dirname, '../..');
const DOCUMENTS = [
  'README.md',
  'CONTRIBUTING.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

const withoutCode = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

function anchors(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!.replace(/`/g, '')));
}

function brokenLinks(document: string): string[] {
  const file = path.join(ROOT, document);
  const links = [...withoutCode(fs.readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
  return links
    .filter((link) => !/^[a-z]+:/i.test(link))
    .filter((link) => {
      const [target, anchor] = link.split('#') as [string, string | undefined];
      const resolved = target ? path.resolve(path.dirname(file), target) : file;
      if (!fs.existsSync(resolved)) return true;
      return anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).includes(anchor);
    })
    .map((link) => `${document}: ${link}`);
}

test('the documents are the ones this test reads', () => {
  expect(DOCUMENTS).toEqual(expect.arrayContaining(['docs/design.md', 'docs/operations.md', 'docs/threat-model.md']));
});

test.each(DOCUMENTS)('every relative link in %s resolves', (document) => {
  expect(brokenLinks(document)).toEqual([]);
});

test("the README's example requests are valid loop requests, and the scripts they run exist", () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const bodies = [...readme.matchAll(/-d @- <<EOF[^\n]*\n([\s\S]*?)\nEOF\n/g)].map((m) =>
    m[1]!.replaceAll('$PWD', ROOT),
  );
  expect(bodies.length).toBe(2);
  for (const body of bodies) {
    const parsed = loopRequestSchema.safeParse(JSON.parse(body));
    expect(parsed.success ? [] : describeIssues(parsed.error.issues)).toEqual([]);
  }
  const scripts = bodies.flatMap((body) => [...body.matchAll(/"(\/[^"]+\.sh)"/g)].map((m) => m[1]!));
  expect(scripts.length).toBeGreaterThan(0);
  expect(scripts.filter((script) => !fs.existsSync(script))).toEqual([]);
});
