import { z } from 'zod';

// Finding ledger written by the reviewer (docs/design.md §4).

export const FINDING_TOPICS = [
  'correctness',
  'error_handling',
  'security',
  'concurrency',
  'performance',
  'maintainability',
  'testing_gaps',
] as const;
export const SEVERITIES = ['BLOCKER', 'HIGH', 'MEDIUM', 'LOW'] as const;

export const findingSchema = z
  .strictObject({
    id: z.string().regex(/^[A-Z]{3}-\d{3}$/, 'must look like COR-001'),
    title: z.string().trim().min(1).max(300),
    topic: z.enum(FINDING_TOPICS),
    severity: z.enum(SEVERITIES),
    validity: z.enum(['VALID', 'INVALID']),
    disposition: z.enum(['STRONG', 'ACCEPTABLE', 'WEAK']),
    location: z.strictObject({
      file: z.string().trim().min(1).max(1000),
      startLine: z.number().int().min(1),
      endLine: z.number().int().min(1),
    }),
    acceptanceCriteria: z
      .array(z.union([z.string().regex(/^AC-\d+$/), z.literal('GENERAL_REGRESSION')]))
      .min(1, 'name the AC ids the finding affects, or GENERAL_REGRESSION'),
    evidence: z.string().trim().min(1).max(10000),
    failureScenario: z.string().trim().min(1).max(10000),
    reproduction: z.string().trim().min(1).max(10000),
    concreteAlternativeDiff: z.string().max(50000).optional(),
  })
  .superRefine((f, ctx) => {
    if (f.location.endLine < f.location.startLine) {
      ctx.addIssue({ code: 'custom', path: ['location', 'endLine'], message: 'endLine is before startLine' });
    }
    if (isBlocking(f) && !f.concreteAlternativeDiff?.trim()) {
      ctx.addIssue({
        code: 'custom',
        path: ['concreteAlternativeDiff'],
        message: 'required for VALID BLOCKER/HIGH findings',
      });
    }
  });
export type Finding = z.infer<typeof findingSchema>;

export const findingLedgerSchema = z
  .strictObject({ findings: z.array(findingSchema).max(200) })
  .superRefine((ledger, ctx) => {
    const seen = new Set<string>();
    ledger.findings.forEach((f, index) => {
      if (seen.has(f.id))
        ctx.addIssue({ code: 'custom', path: ['findings', index, 'id'], message: `duplicate id ${f.id}` });
      seen.add(f.id);
    });
  });
export type FindingLedger = z.infer<typeof findingLedgerSchema>;

export function isBlocking(f: Pick<Finding, 'validity' | 'severity'>): boolean {
  return f.validity === 'VALID' && (f.severity === 'BLOCKER' || f.severity === 'HIGH');
}

/** What the workflow keeps of a finding; the full text lives in the Finding table. */
export interface FindingSummary {
  findingId: string;
  title: string;
  topic: Finding['topic'];
  severity: Finding['severity'];
  validity: Finding['validity'];
  location: Finding['location'];
  acceptanceCriteria: string[];
  signature: string;
  source: 'REVIEWER' | 'SYSTEM';
}

/**
 * The text a finding signature is the hash of (docs/design.md §4): topic + normalised location + normalised
 * title. Line numbers are left out on purpose: the same defect moves when code above it changes.
 */
export function signatureMaterial(f: Pick<Finding, 'topic' | 'location' | 'title'>): string {
  const file = f.location.file.trim().replace(/\\/g, '/').replace(/^\.\//, '').toLowerCase();
  const title = f.title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
  return `${f.topic}|${file}|${title}`;
}

/** Render zod issues as `path: message` lines — used for repair prompts and API errors alike. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    const where = issue.path.length ? issue.path.join('.') : '(root)';
    const keys = issue.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
    return `${where}: ${issue.message}${keys}`;
  });
}
