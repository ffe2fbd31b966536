import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { buildApp } from '../../api/app';
import { checkDeadlineDefault, checkSeparationOfDuties } from '../../api/decision-policy';
import { DEFAULT_API_POLICY, type ApiPolicy } from '../../api/deps';
import { applyOperatorPolicy } from '../../api/operator-policy';
import { checkRepositorySource } from '../../api/repository-policy';
import { MAX_NESTING_DEPTH } from '../../api/storable-input';
import { applyDecision, decisionRequestSchema } from '../../domain/decision';
import { loopRequestSchema, type LoopRequest, type LoopRequestBody } from '../../domain/loop-request';
import { unstorableCharacter } from '../../domain/storable-text';
import type { PrismaClient } from '../../prisma/client';
import { loopRequest } from '../support/loop-request';

// Every refusal rule the API enforces beyond what a JSON Schema can say is stated in its OpenAPI document
// (api/refusal-rules.ts). Each row makes the real code refuse a request, then finds the rule in the
// document where a client reads it: the document's description for every route, each route's own.

interface OpenApiDocument {
  info: { description: string };
  paths: Record<string, Record<string, { description?: string }>>;
}

let doc: { everyRoute: string; submit: string; decide: string };

beforeAll(async () => {
  const app = await buildApp({
    prisma: {} as unknown as PrismaClient,
    temporal: {} as unknown as Client,
    taskQueue: 'q',
    logLevel: 'silent',
  });
  await app.ready();
  const document = app.swagger() as unknown as OpenApiDocument;
  await app.close();
  doc = {
    everyRoute: document.info.description,
    submit: document.paths['/v1/loops']?.post?.description ?? '',
    decide: document.paths['/v1/loops/{id}/decisions']?.post?.description ?? '',
  };
});

const base = (): LoopRequestBody => loopRequest('/tmp/repo', ['sh', 'fix.sh']);

/** The refusal's message when `body` is refused by the request schema, else null. */
function schemaRefusal(body: LoopRequestBody): string | null {
  const parsed = loopRequestSchema.safeParse(body);
  return parsed.success ? null : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
}

/** The message `check` throws, else null. */
function thrown(check: () => unknown): string | null {
  try {
    check();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

const parsed = (body: LoopRequestBody): LoopRequest => loopRequestSchema.parse(body);
const withRepository = (repository: Partial<LoopRequestBody['repository']>): LoopRequestBody => ({
  ...base(),
  repository: { ...base().repository, ...repository },
});
const policy = (changes: Partial<ApiPolicy>): ApiPolicy => ({ ...DEFAULT_API_POLICY, ...changes });

describe('refused on every route', () => {
  test.each<[string, () => string | null, RegExp]>([
    ['a NUL character', () => unstorableCharacter('a\u0000b'), /NUL character \(U\+0000\)/],
    ['an unpaired surrogate', () => unstorableCharacter('a\ud800b'), /unpaired UTF-16 surrogate/],
  ])('%s in any string', (_rule, refusal, says) => {
    expect(refusal()).not.toBeNull();
    expect(doc.everyRoute).toMatch(says);
    expect(doc.everyRoute).toMatch(/anywhere in the body, path or query/);
  });

  test('nesting, body size and content type, methods, keys', () => {
    expect(doc.everyRoute).toContain(`nested deeper than ${MAX_NESTING_DEPTH} levels: 400`);
    expect(doc.everyRoute).toMatch(/over 1 MiB: 413/);
    expect(doc.everyRoute).toMatch(/other than `application\/json`: 415/);
    expect(doc.everyRoute).toMatch(/method a path does not have: 405, with an `Allow` header/);
    expect(doc.everyRoute).toMatch(/401.*403.*429/);
  });
});

describe('POST /v1/loops states each rule it refuses by', () => {
  const pullRequest = { provider: 'github' as const };
  test.each<[string, () => string | null, RegExp]>([
    [
      'a pull request without the push',
      () => schemaRefusal({ ...withRepository({ credential: 'gh' }), delivery: { push: false, pullRequest } }),
      /a pull request needs the branch pushed \(`delivery\.push: true`\)/,
    ],
    [
      'a pull request without a credential',
      () => schemaRefusal({ ...base(), delivery: { pullRequest } }),
      /pull request needs .* and `repository\.credential`/,
    ],
    [
      'control characters in the URL',
      () => schemaRefusal(withRepository({ url: 'https://example.com/a\u0007b' })),
      /`repository\.url` and `delivery\.pushUrl`: .*control characters/,
    ],
    [
      'whitespace in the URL',
      () => schemaRefusal(withRepository({ url: '/tmp/a b' })),
      /control characters or whitespace/,
    ],
    ['a URL read as an option', () => schemaRefusal(withRepository({ url: '-uhack' })), /pushUrl`: .*a leading "-"/],
    ['a transport helper', () => schemaRefusal(withRepository({ url: 'ext::sh -c x' })), /`<transport>::` helper/],
    [
      'credentials in the URL',
      () => schemaRefusal(withRepository({ url: 'https://me:secret@example.com/r.git' })),
      /credentials embedded in the URL/,
    ],
    [
      'plain http to another host',
      () => schemaRefusal(withRepository({ url: 'http://example.com/r.git' })),
      /plain http:\/\/ to another host/,
    ],
    [
      'git://',
      () => schemaRefusal(withRepository({ url: 'git://example.com/r.git' })),
      /git:\/\/ and any other scheme/,
    ],
    ['another scheme', () => schemaRefusal(withRepository({ url: 'ftp://example.com/r' })), /any other scheme/],
    [
      'an ssh host read as an option',
      () => schemaRefusal(withRepository({ url: '-oProxy@x:y' })),
      /an ssh host beginning with "-"/,
    ],
    [
      'a local repository the operator does not allow',
      () =>
        thrown(() =>
          checkRepositorySource(
            policy({ repositories: { allowLocal: false, connectTimeoutSeconds: 20 } }),
            parsed(withRepository({ url: '/srv/repo' })),
          ),
        ),
      /where the operator allows local repositories \(`ALLOW_LOCAL_REPOSITORIES`\)/,
    ],
    [
      'a credential the operator did not configure',
      () =>
        thrown(() =>
          checkRepositorySource(policy({ credentialNames: [] }), parsed(withRepository({ credential: 'gh' }))),
        ),
      /`repository\.credential`: the name of a credential the operator configured/,
    ],
    [
      'a base ref read as an option',
      () => schemaRefusal(withRepository({ baseRef: '-x' })),
      /`repository\.baseRef`: .*no leading "-"/,
    ],
    [
      'whitespace in the base ref',
      () => schemaRefusal(withRepository({ baseRef: 'a b' })),
      /no whitespace, control characters or any of ~ \^ : \? \* \[ \\/,
    ],
    ['".." in the base ref', () => schemaRefusal(withRepository({ baseRef: 'a..b' })), /no "\.\."/],
    ['"@" as the base ref', () => schemaRefusal(withRepository({ baseRef: '@' })), /no "@\{" and not "@"/],
    [
      'a base ref ending in "/"',
      () => schemaRefusal(withRepository({ baseRef: 'main/' })),
      /no leading or trailing "\/" or "\/\/"/,
    ],
    ['a base ref ending in "."', () => schemaRefusal(withRepository({ baseRef: 'main.' })), /no trailing "\."/],
    [
      'a ".lock" part in the base ref',
      () => schemaRefusal(withRepository({ baseRef: 'a/b.lock' })),
      /ending with "\.lock"/,
    ],
    [
      'an acceptance criterion id twice',
      () => {
        const body = base();
        const [first] = body.contract.acceptanceCriteria;
        return schemaRefusal({ ...body, contract: { ...body.contract, acceptanceCriteria: [first!, first!] } });
      },
      /each `id` once/,
    ],
    [
      'a gate twice',
      () => schemaRefusal({ ...base(), gates: [base().gates![0]!, base().gates![0]!] }),
      /`gates`: each gate at most once/,
    ],
    [
      'a JUnit report outside the repository',
      () => schemaRefusal({ ...base(), gates: [{ gate: 'tests', argv: ['npm', 'test'], junitReport: '../r.xml' }] }),
      /`junitReport` relative to the repository root, without "\.\." segments/,
    ],
    [
      'a network entry that is not a host',
      () => schemaRefusal({ ...base(), gateNetwork: ['not a host'] }),
      /`network` and `gateNetwork` lists: each entry a host, host:port or \*\.domain/,
    ],
    [
      'a blank objective',
      () => schemaRefusal({ ...base(), contract: { ...base().contract, objective: '   ' } }),
      /trimmed before their length is checked/,
    ],
    [
      'a deadline that approves',
      () =>
        thrown(() =>
          checkDeadlineDefault(
            DEFAULT_API_POLICY,
            parsed({ ...base(), escalation: { decisionDeadlineSeconds: 60, defaultDecision: 'approve' } }),
          ),
        ),
      /`escalation\.defaultDecision: "approve"` only where the operator allows .*`ALLOW_DEADLINE_APPROVE`/,
    ],
    [
      "a request above the operator's ceilings",
      () => thrown(() => applyOperatorPolicy(policy({ operator: { maxIterations: 1 } }), parsed(base()))),
      /above the operator's ceilings \(`GET \/v1\/policy`.*400 naming the field and the ceiling/,
    ],
  ])('%s', (_rule, refusal, says) => {
    expect(refusal()).not.toBeNull();
    expect(doc.submit).toMatch(says);
  });

  test('and its other refusals: idempotency, disk, Temporal', () => {
    expect(doc.submit).toMatch(/409 when the `Idempotency-Key` was already used with a different request/);
    expect(doc.submit).toMatch(/507 .*`MIN_FREE_DISK_MB`/);
    expect(doc.submit).toMatch(/503 with `Retry-After` while Temporal cannot be reached/);
  });
});

describe('POST /v1/loops/{id}/decisions states each rule it refuses by', () => {
  const escalationId = randomUUID();
  test.each<[string, () => string | null, RegExp]>([
    [
      'an amendment that changes nothing',
      () => thrown(() => decisionRequestSchema.parse({ kind: 'amend', escalationId, contract: {} })),
      /400 when an `amend` changes no contract field/,
    ],
    [
      'a retry without guidance',
      () => thrown(() => decisionRequestSchema.parse({ kind: 'retry', escalationId, guidance: '  ' })),
      /a `retry` has a blank `guidance`/,
    ],
    [
      'an amendment that makes the contract invalid',
      () =>
        thrown(() =>
          applyDecision({ kind: 'amend', actor: 'ana', contract: { acceptanceCriteria: [] } }, parsed(base()).contract),
        ),
      /422 when the amended contract is invalid/,
    ],
    [
      'the submitter deciding with separation of duties',
      () =>
        thrown(() =>
          checkSeparationOfDuties(
            policy({ decisions: { ...DEFAULT_API_POLICY.decisions, separationOfDuties: true } }),
            { id: 'l', submittedByKeyId: 'k' },
            { keyId: 'k', name: 'ana', role: 'admin' },
          ),
        ),
      /403 with separation of duties \(`SEPARATION_OF_DUTIES`\): the key that submitted the loop may not decide it/,
    ],
  ])('%s', (_rule, refusal, says) => {
    expect(refusal()).not.toBeNull();
    expect(doc.decide).toMatch(says);
  });

  test('and the state it must find: the open escalation of a running loop', () => {
    expect(doc.decide).toMatch(/409 when the loop has ended or not started, when the escalation was already decided/);
    expect(doc.decide).toMatch(/503 with `Retry-After`/);
  });
});
