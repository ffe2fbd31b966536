import { XMLParser, XMLValidator } from 'fast-xml-parser';
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
// hold exactly that many testcases. A document that is not well-formed XML (fast-xml-parser's
// validator), has a DOCTYPE with an internal subset (entity definitions), another root, or a
// testcase inside a testcase yields null.

/** One element as fast-xml-parser's ordered output gives it: `{ [tag]: children, ':@': attributes }`. */
type OrderedNode = Record<string, unknown>;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  parseTagValue: false,
  // numeric character references (`&#233;`) as well as the five XML entities
  htmlEntities: true,
});

// Entity definitions are never needed in a test report, and expanding them is how XML bombs work.
const INTERNAL_SUBSET = /<!DOCTYPE[^>]*\[/i;

export function parseJUnitXml(xml: string): TestReport | null {
  const text = xml.replace(/^\uFEFF/, '');
  if (text.trim() === '' || INTERNAL_SUBSET.test(text) || XMLValidator.validate(text) !== true) return null;
  let nodes: OrderedNode[];
  try {
    nodes = parser.parse(text) as OrderedNode[];
  } catch {
    return null;
  }
  const roots = nodes.filter((node) => elementName(node) !== undefined);
  const root = roots[0];
  if (roots.length !== 1 || !root) return null;
  const name = elementName(root);
  if (name !== 'testsuites' && name !== 'testsuite') return null;
  const report: TestReport = { runner: 'junit', passed: 0, failed: 0, skipped: 0, passedTests: [] };
  return walk(root, report, false) === null ? null : report;
}

/** Adds the testcases at or below `node` to the report; their number, or null when the document is not usable JUnit. */
function walk(node: OrderedNode, report: TestReport, inTestcase: boolean): number | null {
  const name = elementName(node)!;
  const children = childElements(node);
  if (name === 'testcase') {
    if (inTestcase) return null;
    const outcome = children.some((c) => ['failure', 'error'].includes(elementName(c)!))
      ? 'failed'
      : children.some((c) => elementName(c) === 'skipped')
        ? 'skipped'
        : 'passed';
    // A testcase inside one of its children is still a testcase inside a testcase.
    for (const child of children) if (walk(child, report, true) === null) return null;
    report[outcome]++;
    const testName = attributes(node).name;
    if (outcome === 'passed' && testName) report.passedTests.push(testName);
    return 1;
  }
  let testcases = 0;
  for (const child of children) {
    const n = walk(child, report, inTestcase);
    if (n === null) return null;
    testcases += n;
  }
  if (name === 'testsuite') {
    const tests = attributes(node).tests;
    const hasSuites = children.some((c) => elementName(c) === 'testsuite');
    if (tests !== undefined && !hasSuites && Number(tests) !== testcases) return null;
  }
  return testcases;
}

function elementName(node: OrderedNode): string | undefined {
  return Object.keys(node).find((key) => key !== ':@' && key !== '#text' && !key.startsWith('?'));
}

function childElements(node: OrderedNode): OrderedNode[] {
  const children = node[elementName(node)!];
  return Array.isArray(children) ? (children as OrderedNode[]).filter((c) => elementName(c) !== undefined) : [];
}

function attributes(node: OrderedNode): Record<string, string> {
  const attrs = node[':@'];
  return typeof attrs === 'object' && attrs !== null ? (attrs as Record<string, string>) : {};
}
