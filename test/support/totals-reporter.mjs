// Appends each jest run's counts to $JEST_TOTALS_FILE, so `npm test` can close on one line for all its
// runs ("tests: N passed, N failed"): CI reads a run's closing line, and jest's own summary is not one it
// reads, while output of the real runners our tests drive (go test, cargo test, pytest) is. The projects a
// run covered (unit, workflow, integration, e2e) are kept beside its counts for the line before it.
import fs from 'node:fs';

class TotalsReporter {
  onRunComplete(_contexts, results) {
    const file = process.env.JEST_TOTALS_FILE;
    if (!file) return;
    const projects = [...new Set(results.testResults.map((r) => r.displayName?.name ?? 'default'))].sort();
    const counts = {
      projects,
      passed: results.numPassedTests,
      failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
    };
    fs.appendFileSync(file, `${JSON.stringify(counts)}\n`);
  }
}

export default TotalsReporter;
