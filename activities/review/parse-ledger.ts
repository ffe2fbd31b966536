import { describeIssues, findingLedgerSchema, type FindingLedger } from '../../domain/ledger';

export type LedgerParse = { ok: true; ledger: FindingLedger } | { ok: false; errors: string[] };

/** Parses a model's answer into a finding ledger; tolerates a Markdown code fence around the JSON. */
export function parseLedger(content: string): LedgerParse {
  const unfenced = content
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  let json: unknown;
  try {
    json = JSON.parse(unfenced);
  } catch (err) {
    return { ok: false, errors: [`the answer is not JSON: ${(err as Error).message}`] };
  }
  const result = findingLedgerSchema.safeParse(json);
  return result.success
    ? { ok: true, ledger: result.data }
    : { ok: false, errors: describeIssues(result.error.issues) };
}
