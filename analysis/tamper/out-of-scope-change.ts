import { matchesGlob } from '../../domain/glob-match';
import { firstChangedLine } from './change-set';
import type { TamperCheck, TamperFinding } from './types';

// docs/design.md §3.4: the contract bounds where the maker may work — inside `scope`, outside `outOfScope`.

export const outOfScopeChange: TamperCheck = async ({ input, changes }) => {
  // Free-text outOfScope entries ("do not touch billing") are for the reviewer, not path rules.
  const forbidden = input.outOfScope.map((entry) => entry.trim()).filter((entry) => entry && !/\s/.test(entry));
  // An empty scope list is treated like an absent one: no contract asks for a change touching nothing.
  const scope = input.scope?.length ? input.scope : null;
  const findings: TamperFinding[] = [];
  const reported = new Set<string>();
  for (const change of changes) {
    // A rename touches both paths: moving a file out of a forbidden area is a change there too.
    for (const file of new Set([change.checkpointPath, change.basePath])) {
      if (!file || reported.has(file)) continue;
      const inForbidden = forbidden.find((glob) => matchesPathGlob(file, glob));
      const outsideScope = scope && !scope.some((glob) => matchesPathGlob(file, glob));
      if (!inForbidden && !outsideScope) continue;
      reported.add(file);
      const line = file === change.checkpointPath ? firstChangedLine(change) : 1;
      findings.push({
        rule: 'OUT_OF_SCOPE_CHANGE',
        title: 'File changed outside the contract scope',
        topic: 'maintainability',
        location: { file, startLine: line, endLine: line },
        evidence: inForbidden
          ? `${file} matches the contract's outOfScope entry \`${inForbidden}\`.`
          : `${file} is outside the contract scope (${scope!.join(', ')}).`,
      });
    }
  }
  return findings;
};

/** A glob, or a directory given without one (`migrations`, `migrations/`) meaning everything under it. */
function matchesPathGlob(file: string, glob: string): boolean {
  const pattern = glob.replace(/^\.\//, '').replace(/\/+$/, '');
  return matchesGlob(file, pattern, { dot: true }) || matchesGlob(file, `${pattern}/**`, { dot: true });
}
