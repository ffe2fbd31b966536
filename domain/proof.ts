import type { AcVerification } from './contract';

/** How an acceptance criterion is proven, in words a maker can act on. */
export function describeProof(v: AcVerification): string {
  switch (v.type) {
    case 'gate':
      return `the ${v.gate} gate passes`;
    case 'test':
      return `a passing test named "${v.name}"`;
    case 'command':
      return `the command \`${v.argv.join(' ')}\` exits 0`;
  }
}
