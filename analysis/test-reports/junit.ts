import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { emptyReport, type RunnerName, type TestReport } from './report';

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
//
// How a testcase is named depends on its producer, so a runner the service asked for a report passes
// its own naming (vitest.ts, node-test.ts, pytest.ts); a report of unknown origin (a gate's declared
// `junitReport`) names a testcase by its `name` alone, since what its classname and file attributes
// hold varies (mocha's xunit writes the absolute path of the machine that ran it). Failed tests are
// named like passed ones.

/** What a producer may say about one testcase. */
export interface JUnitTestcase {
  name: string;
  classname?: string;
  file?: string;
  /** Names of the `<testsuite>` elements it sits in, outermost first. */
  suites: string[];
}

export interface JUnitReading {
  runner: RunnerName;
  name: (testcase: JUnitTestcase) => string;
}

const UNKNOWN_PRODUCER: JUnitReading = { runner: 'junit', name: (testcase) => testcase.name };

/**
 * A JVM test as surefire, failsafe and Gradle name it: its class, fully qualified, then its method
 * (`com.example.CalcTest > adds`); Gradle's `adds()` for a JUnit 5 method without parameters loses its
 * empty parentheses, so both tools name a test alike. A parameterised one keeps its arguments (`adds(int)[1]`).
 */
export function jvmJUnitName(testcase: JUnitTestcase): string {
  const method = testcase.name.replace(/\(\)$/, '');
  return testcase.classname ? `${testcase.classname} > ${method}` : method;
}

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

export function parseJUnitXml(xml: string, reading: JUnitReading = UNKNOWN_PRODUCER): TestReport | null {
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
  const report = emptyReport(reading.runner);
  return walk(root, { report, reading, suites: [], inTestcase: false }) === null ? null : report;
}

interface Walk {
  report: TestReport;
  reading: JUnitReading;
  suites: string[];
  inTestcase: boolean;
}

/** Adds the testcases at or below `node` to the report; their number, or null when the document is not usable JUnit. */
function walk(node: OrderedNode, at: Walk): number | null {
  const name = elementName(node)!;
  const children = childElements(node);
  if (name === 'testcase') {
    if (at.inTestcase) return null;
    const outcome = children.some((c) => ['failure', 'error'].includes(elementName(c)!))
      ? 'failed'
      : children.some((c) => elementName(c) === 'skipped')
        ? 'skipped'
        : 'passed';
    // A testcase inside one of its children is still a testcase inside a testcase.
    for (const child of children) if (walk(child, { ...at, inTestcase: true }) === null) return null;
    at.report[outcome]++;
    const { name: testName, classname, file } = attributes(node);
    if (testName && outcome !== 'skipped') {
      const testcase: JUnitTestcase = {
        name: testName,
        ...(classname ? { classname } : {}),
        ...(file ? { file } : {}),
        suites: at.suites,
      };
      (outcome === 'passed' ? at.report.passedTests : at.report.failedTests).push(at.reading.name(testcase));
    }
    return 1;
  }
  const suiteName = name === 'testsuite' ? attributes(node).name : undefined;
  const inner = suiteName ? { ...at, suites: [...at.suites, suiteName] } : at;
  let testcases = 0;
  for (const child of children) {
    const n = walk(child, inner);
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
