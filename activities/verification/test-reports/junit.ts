import { type TestReport } from './report';

// JUnit XML, the report file many runners write (pytest --junitxml, mocha's xunit reporter,
// node --test-reporter=junit, surefire, ...). There is no single schema; what producers share is
// a `<testsuites>` or `<testsuite>` root, `<testsuite>` elements (possibly nested) holding
// `<testcase>` elements, and a testcase's outcome as its children: `<failure>` or `<error>` →
// failed, `<skipped>` → skipped, neither → passed.
//
// The counts come from the testcases, not from the suites' attributes, because producers disagree
// on those (mocha's xunit reports failures under `errors`; some count a failed-and-errored test
// twice). As a consistency check, each innermost `<testsuite>` that has a `tests` attribute must
// hold exactly that many testcases. Anything that is not well-formed in the ways checked here (tags
// that do not nest, a testcase inside a testcase, an unknown root) yields null.
//
// A small tokenizer, not a full XML parser: comments, CDATA, processing instructions and a DOCTYPE
// without an internal subset are dropped first, then every `<...>` must be a well-formed tag.

const DROPPED = /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|<!DOCTYPE[^>[]*>/g;
const NAME = '[A-Za-z_][\\w.:-]*';
const TAG = new RegExp(
  `<(/?)(${NAME})((?:\\s+${NAME}\\s*=\\s*(?:"[^"<]*"|'[^'<]*'))*)\\s*(/?)>`,
  'y',
);
const ATTRIBUTE = new RegExp(`(${NAME})\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, 'g');

interface Element {
  name: string;
  attributes: Map<string, string>;
  /** testsuite: testcases below it, at any depth */
  testcases: number;
  /** testsuite: whether another testsuite is nested in it */
  hasSuites: boolean;
  /** testcase: its outcome so far */
  outcome: 'passed' | 'failed' | 'skipped';
}

export function parseJUnitXml(xml: string): TestReport | null {
  const text = xml.replace(/^\uFEFF/, '').replace(DROPPED, '');
  if (text.includes('<!')) return null;
  const report: TestReport = { runner: 'junit', passed: 0, failed: 0, skipped: 0, passedTests: [] };
  const stack: Element[] = [];
  let roots = 0;
  for (let at = text.indexOf('<'); at !== -1; at = text.indexOf('<', TAG.lastIndex)) {
    TAG.lastIndex = at;
    const tag = TAG.exec(text);
    if (!tag) return null;
    const [, closing, name = '', attributeText = '', selfClosing] = tag;
    if (closing) {
      if (selfClosing || attributeText.trim() !== '') return null;
      const element = stack.pop();
      if (element?.name !== name || !close(element, stack, report)) return null;
      continue;
    }
    if (stack.length === 0) {
      if (roots++ > 0 || (name !== 'testsuites' && name !== 'testsuite')) return null;
    }
    const element = open(name, attributeText, stack);
    if (!element) return null;
    if (selfClosing) {
      if (!close(element, stack, report)) return null;
    } else {
      stack.push(element);
    }
  }
  return roots === 1 && stack.length === 0 ? report : null;
}

function open(name: string, attributeText: string, stack: Element[]): Element | null {
  const parent = stack.at(-1);
  if (name === 'testcase' && stack.some((e) => e.name === 'testcase')) return null;
  if (parent?.name === 'testcase') {
    if (name === 'failure' || name === 'error') parent.outcome = 'failed';
    else if (name === 'skipped' && parent.outcome === 'passed') parent.outcome = 'skipped';
  }
  const attributes = new Map<string, string>();
  for (const [, key = '', double, single] of attributeText.matchAll(ATTRIBUTE)) {
    attributes.set(key, decodeEntities(double ?? single ?? ''));
  }
  return { name, attributes, testcases: 0, hasSuites: false, outcome: 'passed' };
}

function close(element: Element, stack: Element[], report: TestReport): boolean {
  if (element.name === 'testcase') {
    report[element.outcome]++;
    const name = element.attributes.get('name');
    if (element.outcome === 'passed' && name) report.passedTests.push(name);
    for (const ancestor of stack) ancestor.testcases++;
  }
  if (element.name === 'testsuite') {
    const parent = stack.at(-1);
    if (parent) parent.hasSuites = true;
    const tests = element.attributes.get('tests');
    if (tests !== undefined && !element.hasSuites && Number(tests) !== element.testcases) return false;
  }
  return true;
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function decodeEntities(value: string): string {
  return value.replace(/&(?:#(\d+)|#x([0-9a-fA-F]+)|(lt|gt|amp|quot|apos));/g, (entity, dec, hex, named) => {
    if (named) return ENTITIES[named as string] ?? entity;
    const code = dec ? Number.parseInt(dec as string, 10) : Number.parseInt(hex as string, 16);
    return code <= 0x10ffff ? String.fromCodePoint(code) : entity;
  });
}
