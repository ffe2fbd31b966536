import { MAX_NESTING_DEPTH } from './storable-input';

// The refusals a JSON Schema cannot express (zod refinements, the operator's policy, checks in the handlers),
// stated in the OpenAPI document in words: the document's description for those of every route, each
// route's description for its own. test/unit/openapi-refusals.test.ts holds every rule to this text.

const list = (items: string[]) => items.map((item) => `- ${item}`).join('\n');

/** Every route: appended to the document's description. */
export const EVERY_REQUEST_REFUSALS = [
  '**Refused on every route.** Errors have the shape `{ statusCode, error, message, requestId }`; a 400 names the field.',
  list([
    'A string or object key anywhere in the body, path or query holding a NUL character (U+0000) or an unpaired UTF-16 surrogate: 400, since PostgreSQL cannot store it.',
    `An object or array nested deeper than ${MAX_NESTING_DEPTH} levels: 400.`,
    'A body over 1 MiB: 413. A body in a content type other than `application/json`: 415.',
    'A method a path does not have: 405, with an `Allow` header naming the methods it has. A path the API does not have: 404.',
    'Without a valid API key (`Authorization: Bearer <key>` or `x-api-key`): 401; a role the route does not allow: 403; over the rate limit: 429 with `Retry-After`.',
  ]),
].join('\n\n');

/** POST /v1/loops, beyond what its body schema says. */
export const SUBMIT_LOOP_REFUSALS = [
  'Answers 201 with the new loop, or 200 with the loop an earlier request with the same `Idempotency-Key` started.',
  '**Refused (400, naming the field) besides what the schema says:**',
  list([
    '`repository.url` and `delivery.pushUrl`: https://, ssh:// or user@host:path, or a path on the worker (also file:// and loopback http://) where the operator allows local repositories (`ALLOW_LOCAL_REPOSITORIES`). Refused: control characters or whitespace, a leading "-", a `<transport>::` helper (such as `ext::`), credentials embedded in the URL, plain http:// to another host, git:// and any other scheme, an ssh host beginning with "-".',
    '`repository.baseRef`: a branch, tag or commit id as `git check-ref-format` allows it, and no leading "-": no whitespace, control characters or any of ~ ^ : ? * [ \\, no "..", no "@{" and not "@", no leading or trailing "/" or "//", no trailing ".", no "/"-separated part beginning with "." or ending with ".lock".',
    '`repository.credential`: the name of a credential the operator configured.',
    '`contract.acceptanceCriteria`: each `id` once (a duplicate acceptance criterion id is refused).',
    '`gates`: each gate at most once (a gate listed twice is refused); `junitReport` relative to the repository root, without ".." segments.',
    '`network` and `gateNetwork` lists: each entry a host, host:port or *.domain.',
    "`delivery.pullRequest`: a pull request needs the branch pushed (`delivery.push: true`) and `repository.credential` (the provider's API token).",
    '`escalation.defaultDecision: "approve"` only where the operator allows a decision deadline to approve (`ALLOW_DEADLINE_APPROVE`).',
    'Text fields are trimmed before their length is checked: a blank `objective` counts as empty.',
    "Anything above the operator's ceilings (`GET /v1/policy`: maxIterations, timeouts, maxCostUsd, maker backends, models): 400 naming the field and the ceiling.",
  ]),
  '**Other refusals:** 409 when the `Idempotency-Key` was already used with a different request; 507 while the disk where loops keep their workspaces has less free space than `MIN_FREE_DISK_MB`; 503 with `Retry-After` while Temporal cannot be reached (nothing is recorded; send the same request again).',
].join('\n\n');

/** POST /v1/loops/{id}/decisions, beyond what its body schema says. */
export const DECISION_REFUSALS = [
  '**Refused:**',
  list([
    '404 when the loop or the escalation `escalationId` is not found; 409 when the loop has ended or not started, when the escalation was already decided and is not the open one, or when the loop is not awaiting a decision.',
    '403 with separation of duties (`SEPARATION_OF_DUTIES`): the key that submitted the loop may not decide it.',
    '400 when an `amend` changes no contract field, or a `retry` has a blank `guidance`; 422 when the amended contract is invalid (its fields as in the loop request).',
    '503 with `Retry-After` while Temporal cannot be reached.',
  ]),
].join('\n\n');
