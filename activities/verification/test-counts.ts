// Test counts as gate evidence; the parsers live in ./test-reports, one file per runner.
export { parseJUnitXml, parseTestCounts } from './test-reports';
export type { RunnerName, TestCounts, TestReport } from './test-reports';
