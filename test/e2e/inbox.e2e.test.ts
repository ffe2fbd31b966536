import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { blockerLedger, cleanLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, createFixtureRepo, makerPrompts, scriptedMaker } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// The escalation inbox through a real browser: headless Chromium (Debian's /usr/bin/chromium, installed
// by scripts/install-chromium.sh) driven by playwright-core against the real API, Temporal dev server,
// worker process, PostgreSQL, scripted maker and fake LLM of the loop harness.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** What the API records as the actor of a decision made with the harness's approver key (named "ana"). */
const ANA = /^ana \(key [0-9a-f-]{36}\)$/;
const ANA_AMENDED = /^amended by ana \(key [0-9a-f-]{36}\)$/;
/** What the page says when the list request gets a 401 with an empty / a rejected key field. */
const KEY_NEEDED =
  "An API key is needed: enter an approver's API key above and press Enter to see and decide escalations.";
const KEY_REJECTED =
  "The API key was not accepted (unknown or revoked). Enter an approver's API key above and press Enter.";
const NOT_APPROVER =
  "This API key lacks the approver role, so it cannot decide escalations. Enter an approver's (or admin's) API key above and try again.";
/** Chromium logs every non-2xx response as a console error. */
const consoleHttpError = (status: string) =>
  `console: Failed to load resource: the server responded with a status of ${status}`;
/** Screenshots for a human to look at; never committed. */
const SCREENSHOT_DIR = path.join(os.tmpdir(), 'inbox-e2e');
/** A finding title that would run script if the page ever inserted report text as HTML. */
const HOSTILE_TITLE = '<img src=x onerror="window.__xss=1"> sum() loses precision for large integers';
/** The same, as a script element: in a finding title, and in a line of the change (so in the diff). */
const SCRIPT_TITLE = '<script>window.__xss=2</script> sum() is unchecked';
const SCRIPT_LINE = '// <script>window.__xss=3</script><img src=x onerror="window.__xss=4">';

let h: LoopHarness;
let browser: Browser;
beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: run scripts/install-chromium.sh (as root) or set CHROMIUM_PATH`);
  }
  h = await startLoopHarness();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

interface SeenRequest {
  method: string;
  path: string;
  authorization: string | undefined;
}

/** A page that records its API requests and fails the test on any script error or CSP violation. */
async function openPage(context: BrowserContext): Promise<{ page: Page; requests: SeenRequest[]; problems: string[] }> {
  const page = await context.newPage();
  const requests: SeenRequest[] = [];
  const problems: string[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/v1/'))
      requests.push({
        method: r.method(),
        path: url.pathname + url.search,
        authorization: r.headers()['authorization'],
      });
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  await page.goto(`${h.baseUrl}/inbox`);
  return { page, requests, problems };
}

/** Waits for a locator; on timeout the error says what the page showed and what went wrong in it. */
async function shown(
  opened: { page: Page; problems: string[] },
  locator: ReturnType<Page['locator']>,
  timeout = 15_000,
): Promise<void> {
  try {
    await locator.waitFor({ timeout });
  } catch (err) {
    const status = await opened.page
      .locator('#status')
      .innerText({ timeout: 1000 })
      .catch(
        async (e: Error) =>
          `(no status line: ${e.message}) at ${opened.page.url()}: ${(await opened.page.content()).slice(0, 2000)}`,
      );
    throw new Error(
      `${(err as Error).message}\npage status: ${status}\npage problems: ${JSON.stringify(opened.problems)}`,
    );
  }
}

const card = (page: Page, loopId: string) => page.locator(`article.escalation[data-loop-id="${loopId}"]`);

async function escalate(ledger: string, steps: Record<string, { write: Record<string, string> }>) {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps });
  h.llm.enqueue({ content: ledger });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv, { maxIterations: 1 }));
  expect(submitted.status).toBe(201);
  const loop = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(loop.status).toBe('AWAITING_DECISION');
  return { loop, repo, maker };
}

test('GET /v1/escalations validates its query; /inbox is an HTML page with a strict CSP, not in the API docs', async () => {
  const empty = await h.request('GET', '/v1/escalations');
  expect(empty).toEqual({ status: 200, body: { escalations: [] } });
  const bad = await h.request('GET', '/v1/escalations?limit=0');
  expect(bad.status).toBe(400);
  expect(bad.body).toMatchObject({ statusCode: 400, error: 'Bad Request', requestId: expect.any(String) });
  expect(bad.body.message).toContain('querystring.limit');
  expect(await h.request('GET', '/v1/escalations', undefined, { authorization: '' })).toEqual({
    status: 401,
    body: {
      statusCode: 401,
      error: 'Unauthorized',
      message: expect.stringContaining('missing API key'),
      requestId: expect.any(String),
    },
  });

  const inbox = await fetch(`${h.baseUrl}/inbox`);
  expect(inbox.status).toBe(200);
  expect(inbox.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(inbox.headers.get('content-security-policy')).toMatch(
    /^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'; style-src 'sha256-/,
  );
  expect(await inbox.text()).toContain('<title>Escalation inbox</title>');

  const docs = (await (await fetch(`${h.baseUrl}/docs/json`)).json()) as { paths: Record<string, unknown> };
  expect(docs.paths).toHaveProperty('/v1/escalations');
  expect(docs.paths).not.toHaveProperty('/inbox');
});

test('the inbox shows an escalation and its report as text; approve from the page is accepted, a stale page gets the 409', async () => {
  const { loop: escalated, repo } = await escalate(blockerLedger(HOSTILE_TITLE), {
    '1': { write: { 'src/sum.js': CORRECT_SUM } },
  });

  const listed = await h.request('GET', '/v1/escalations');
  expect(listed.status).toBe(200);
  expect(listed.body.escalations).toEqual([
    expect.objectContaining({
      loopId: escalated.id,
      workflowId: `loop-${escalated.id}`,
      repository: { url: repo, baseRef: expect.any(String) },
      trigger: 'MAX_ITERATIONS',
      sequence: 1,
      status: 'OPEN',
      createdAt: expect.any(String),
    }),
  ]);
  const report = listed.body.escalations[0].report;
  expect(report.body.openFindings).toEqual([
    expect.objectContaining({ findingId: 'COR-001', severity: 'BLOCKER', title: HOSTILE_TITLE }),
  ]);
  expect(report.body.options.map((o: any) => o.decision)).toEqual(
    expect.arrayContaining(['retry', 'approve', 'reject']),
  );
  expect(report.markdown).toContain('## 6. Workspace');

  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  try {
    const first = await openPage(context);
    const { page } = first;
    const item = card(page, escalated.id);
    // Loaded without a key: the API answers 401 and the page asks for an approver's key, showing no data.
    await shown(first, page.locator('#status.auth'));
    expect(await page.locator('#status').innerText()).toBe(KEY_NEEDED);
    expect(await page.locator('#api-key').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('article.escalation').count()).toBe(0);
    expect(first.requests).toEqual([{ method: 'GET', path: '/v1/escalations', authorization: undefined }]);
    fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'key-needed.png') });
    const authorisedFrom = first.requests.length;
    await page.locator('#api-key').fill(h.keys.approver);
    const keyed = page.waitForRequest(
      (r) => r.url().endsWith('/v1/escalations') && r.headers()['authorization'] === `Bearer ${h.keys.approver}`,
    );
    await page.locator('#api-key').press('Enter');
    await keyed;
    await shown(first, item);
    expect(await page.locator('#api-key').getAttribute('aria-invalid')).toBeNull();

    const text = await item.innerText();
    expect(text).toContain('MAX_ITERATIONS');
    expect(text).toContain('Escalated at iteration 1 of 1 because the iteration limit was reached.');
    expect(text).toContain('Core blocker');
    expect(text).toContain(`loop-${escalated.id}`);
    expect(text).toContain(escalated.iterations[0].checkpointCommit);
    // The hostile title is shown as the characters it is; no element came out of it and nothing ran.
    expect(text).toContain(HOSTILE_TITLE);
    expect(await page.locator('article.escalation img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as any).__xss)).toBeUndefined();
    // Markdown tables and the numbered options are real tables and lists.
    expect(await item.locator('table th', { hasText: 'severity' }).count()).toBeGreaterThan(0);
    expect(await item.locator('table td', { hasText: 'COR-001' }).count()).toBe(1);
    expect(await item.locator('h4:has-text("5. Options") + ol > li').allInnerTexts()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^retry — /),
        expect.stringMatching(/^approve — /),
        expect.stringMatching(/^reject — /),
      ]),
    );

    fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'escalation.png'), fullPage: true });

    // A second tab of the same browser profile: the key comes from localStorage.
    const stale = await openPage(context);
    await shown(stale, card(stale.page, escalated.id));
    expect(await stale.page.locator('#api-key').inputValue()).toBe(h.keys.approver);

    await item.locator('textarea[name="comment"]').fill('acceptable risk');
    await item.getByRole('button', { name: 'Approve' }).click();
    await shown(first, item.locator('.result.ok'));
    expect(await item.locator('.result').innerText()).toMatch(
      /^Decision accepted: .*approve.*\. Refresh to update the inbox\.$/,
    );
    expect(await item.getByRole('button', { name: 'Approve' }).isDisabled()).toBe(true);

    const staleItem = card(stale.page, escalated.id);
    await staleItem.getByRole('button', { name: 'Reject' }).click();
    await shown(stale, staleItem.locator('.result.warn'));
    // Which 409 depends on how far the approved loop got: still finishing, decision recorded, or ended.
    expect(await staleItem.locator('.result').innerText()).toMatch(
      /^Conflict: loop .+ (is not awaiting a decision \(status [A-Z_]+\)|escalation #1 was already decided and is not the open one|has ended \(APPROVED\); there is nothing to decide)\. Someone may have decided already; refresh the inbox\.$/,
    );

    const loop = await h.waitForLoop(escalated.id, ['APPROVED', 'REJECTED', 'FAILED']);
    expect(loop.status).toBe('APPROVED');
    expect(loop.escalations[0]).toMatchObject({
      status: 'DECIDED',
      decision: { kind: 'approve', actor: expect.stringMatching(ANA), comment: 'acceptable risk' },
    });

    await page.reload();
    await shown(first, page.locator('.empty'));
    expect(await page.locator('article.escalation').count()).toBe(0);
    expect(await page.locator('#status').innerText()).toMatch(/^0 open escalations/);
    expect((await h.request('GET', '/v1/escalations')).body.escalations).toEqual([]);

    // Every API call after the key was entered carried it; the second tab had it from the start.
    const posted = [...first.requests.slice(authorisedFrom), ...stale.requests];
    expect(posted.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      `/v1/loops/${escalated.id}/decisions`,
      `/v1/loops/${escalated.id}/decisions`,
    ]);
    expect(posted.every((r) => r.authorization === `Bearer ${h.keys.approver}`)).toBe(true);
    // The keyless first load's 401 and the stale tab's 409 were the point; nothing else went wrong.
    expect(first.problems).toEqual([consoleHttpError('401 (Unauthorized)')]);
    expect(stale.problems).toEqual([consoleHttpError('409 (Conflict)')]);
  } finally {
    await context.close();
  }
});

test('open escalations are listed oldest first; retry from the page needs guidance, which reaches the maker; reject closes the other', async () => {
  const a = await escalate(blockerLedger(), {
    '1': { write: { 'src/sum.js': CORRECT_SUM } },
    '2': { write: { 'src/sum.js': `// checked\n${CORRECT_SUM}` } },
  });
  const b = await escalate(blockerLedger(), { '1': { write: { 'src/sum.js': CORRECT_SUM } } });
  const listed = await h.request('GET', '/v1/escalations');
  const ours = (ids: string[]) => ids.filter((id) => id === a.loop.id || id === b.loop.id);
  expect(ours(listed.body.escalations.map((e: any) => e.loopId))).toEqual([a.loop.id, b.loop.id]);
  h.llm.enqueue({ content: cleanLedger }); // the review after the retry

  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  try {
    await context.addInitScript((key) => {
      // Runs in the page (this TypeScript project has no DOM lib).
      const storage = (globalThis as any).localStorage;
      if (!storage.getItem('escalationInbox.apiKey')) storage.setItem('escalationInbox.apiKey', key);
    }, h.keys.approver);
    const opened = await openPage(context);
    const { page, requests, problems } = opened;
    await shown(opened, card(page, b.loop.id));
    expect(
      ours(await page.locator('article.escalation').evaluateAll((els) => els.map((e: any) => e.dataset.loopId))),
    ).toEqual([a.loop.id, b.loop.id]);
    expect(await page.locator('#status').innerText()).toMatch(/^\d+ open escalations, oldest first — updated /);

    const first = card(page, a.loop.id);
    await first.getByRole('button', { name: 'Retry with guidance' }).click();
    expect(await first.locator('.result.error').innerText()).toBe('A retry needs guidance for the maker.');
    expect(requests.filter((r) => r.method === 'POST')).toEqual([]);

    await first.locator('textarea[name="guidance"]').fill('Use BigInt so large integers stay exact.');
    await first.getByRole('button', { name: 'Retry with guidance' }).click();
    await shown(opened, first.locator('.result.ok'));
    expect(await first.locator('.result').innerText()).toMatch(
      /^Decision accepted: .*retry.*\. Refresh to update the inbox\.$/,
    );

    const second = card(page, b.loop.id);
    await second.locator('textarea[name="comment"]').fill('duplicate of the other task');
    await second.getByRole('button', { name: 'Reject' }).click();
    await shown(opened, second.locator('.result.ok'));
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'decided.png'), fullPage: true });

    const retried = await h.waitForLoop(a.loop.id, ['PASSED', 'FAILED', 'REJECTED', 'APPROVED']);
    expect(retried.status).toBe('PASSED');
    expect(
      retried.iterations.map((i: any) => [i.sequence, i.roundIteration, i.contractVersion, i.verdict.verdict]),
    ).toEqual([
      [1, 1, 1, 'ESCALATE'],
      [2, 1, 2, 'PASS'],
    ]);
    expect(retried.contractVersions[1].contract.constraints).toContain(
      'Human guidance: Use BigInt so large integers stay exact.',
    );
    expect(retried.escalations[0].decision).toMatchObject({
      kind: 'retry',
      actor: expect.stringMatching(ANA),
      guidance: 'Use BigInt so large integers stay exact.',
    });
    expect(makerPrompts(a.maker.stateDir)[1]).toContain('Human guidance: Use BigInt so large integers stay exact.');

    const rejected = await h.waitForLoop(b.loop.id, ['REJECTED', 'APPROVED', 'FAILED']);
    expect(rejected.escalations[0].decision).toMatchObject({
      kind: 'reject',
      actor: expect.stringMatching(ANA),
      comment: 'duplicate of the other task',
    });

    await page.reload();
    await shown(opened, page.locator('#status', { hasText: 'updated' }));
    expect(await card(page, a.loop.id).count()).toBe(0);
    expect(await card(page, b.loop.id).count()).toBe(0);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((r) => r.authorization === `Bearer ${h.keys.approver}`)).toBe(true);
    expect(problems).toEqual([]);
  } finally {
    await context.close();
  }
}, 240_000);

test("a rejected key gets no data; a submitter's key lists escalations but deciding shows that it lacks the approver role", async () => {
  const { loop: escalated } = await escalate(blockerLedger(), { '1': { write: { 'src/sum.js': CORRECT_SUM } } });

  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  try {
    const opened = await openPage(context);
    const { page, requests, problems } = opened;
    await shown(opened, page.locator('#status.auth'));
    expect(await page.locator('#status').innerText()).toBe(KEY_NEEDED);

    // A key the API does not know: the page says so, not the API's wording.
    await page.locator('#api-key').fill('not-a-real-key');
    await page.locator('#api-key').press('Enter');
    await shown(opened, page.locator('#status.auth', { hasText: 'not accepted' }));
    expect(await page.locator('#status').innerText()).toBe(KEY_REJECTED);
    expect(await page.locator('article.escalation').count()).toBe(0);

    // Any valid key may list; only an approver (or admin) may decide.
    await page.locator('#api-key').fill(h.keys.submitter);
    await page.locator('#api-key').press('Enter');
    const item = card(page, escalated.id);
    await shown(opened, item);
    await item.locator('textarea[name="comment"]').fill('looks fine to me');
    await item.getByRole('button', { name: 'Approve' }).click();
    await shown(opened, item.locator('.result.error'));
    expect(await item.locator('.result').innerText()).toBe(NOT_APPROVER);
    // Nothing was decided; the buttons are usable again, so the decision can be made with another key.
    expect(await item.getByRole('button', { name: 'Approve' }).isDisabled()).toBe(false);
    expect((await h.request('GET', `/v1/loops/${escalated.id}`)).body.status).toBe('AWAITING_DECISION');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'not-approver.png'), fullPage: true });

    await page.locator('#api-key').fill(h.keys.approver);
    const relisted = page.waitForResponse(
      (r) =>
        r.url().endsWith('/v1/escalations') && r.request().headers()['authorization'] === `Bearer ${h.keys.approver}`,
    );
    await page.locator('#api-key').press('Enter');
    expect((await relisted).status()).toBe(200);
    await item.locator('.result:empty').waitFor({ state: 'attached' }); // the list was drawn afresh
    await item.locator('textarea[name="comment"]').fill('not this sprint');
    await item.getByRole('button', { name: 'Reject' }).click();
    await shown(opened, item.locator('.result.ok'));
    const rejected = await h.waitForLoop(escalated.id, ['REJECTED', 'APPROVED', 'FAILED']);
    expect(rejected.status).toBe('REJECTED');
    expect(rejected.escalations[0].decision).toMatchObject({
      kind: 'reject',
      actor: expect.stringMatching(ANA),
      comment: 'not this sprint',
    });

    expect(requests.map((r) => [r.method, r.authorization])).toEqual([
      ['GET', undefined],
      ['GET', 'Bearer not-a-real-key'],
      ['GET', `Bearer ${h.keys.submitter}`],
      ['POST', `Bearer ${h.keys.submitter}`],
      ['GET', `Bearer ${h.keys.approver}`],
      ['POST', `Bearer ${h.keys.approver}`],
    ]);
    expect(problems).toEqual([
      consoleHttpError('401 (Unauthorized)'),
      consoleHttpError('401 (Unauthorized)'),
      consoleHttpError('403 (Forbidden)'),
    ]);
  } finally {
    await context.close();
  }
});

test("a loop's own view: its timeline with durations and the explanation of its verdict, from a card's link or the address", async () => {
  const { loop: escalated } = await escalate(blockerLedger(HOSTILE_TITLE), {
    '1': { write: { 'src/sum.js': CORRECT_SUM } },
  });

  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  try {
    await context.addInitScript((key) => {
      (globalThis as any).localStorage.setItem('escalationInbox.apiKey', key);
    }, h.keys.approver);
    const opened = await openPage(context);
    const { page, requests, problems } = opened;
    const item = card(page, escalated.id);
    await shown(opened, item);

    // The card's amend link opens the loop view with its amend form unfolded.
    await item.getByRole('link', { name: 'Amend the contract' }).click();
    await shown(opened, page.locator('#loop details.amend[open] textarea[name="objective"]'));
    expect(new URL(page.url()).hash).toBe(`#loop/${escalated.id}/amend`);
    await page.getByRole('link', { name: '← Back to the inbox' }).click();
    await item.getByRole('link', { name: 'Loop view: findings, diff, timeline' }).click();
    const rows = page.locator('#loop table.timeline tbody tr');
    await shown(opened, rows.first());
    expect(new URL(page.url()).hash).toBe(`#loop/${escalated.id}`);
    expect(await page.locator('#list').isHidden()).toBe(true);
    expect(await page.locator('#loop h2').innerText()).toBe(`Loop ${escalated.id}`);

    // One row per event: time, kind, iteration, title, duration.
    const cells = async (kind: string) =>
      page
        .locator(`#loop tr[data-kind="${kind}"]`)
        .evaluateAll((trs) =>
          trs.map((tr: any) =>
            [...tr.querySelectorAll(':scope > td')].map((td: any) => (td.firstChild?.textContent ?? '').trim()),
          ),
        );
    const phases = await cells('phase');
    expect(phases.map((c) => [c[1], c[2], c[3]])).toEqual(
      expect.arrayContaining([
        ['phase', '', 'PREPARING'],
        ['phase', '#1', 'MAKER'],
        ['phase', '#1', 'VERIFY'],
        ['phase', '#1', 'REVIEW'],
        ['phase', '#1', 'JUDGE'],
        ['phase', '#1', 'AWAITING_DECISION'],
      ]),
    );
    // Finished phases show how long they took (ms, s, min); the current one (awaiting a decision) none.
    const maker = phases.find((c) => c[3] === 'MAKER')!;
    expect(maker[0]).not.toBe('');
    expect(maker[4]).toMatch(/^\d+(\.\d)? (ms|s)$|^\d+ min \d+ s$/);
    expect(phases.at(-1)).toEqual([expect.any(String), 'phase', '#1', 'AWAITING_DECISION', '']);
    expect((await cells('command')).map((c) => c[3])).toContain('tests: PASSED (exit 0) · 2 passed, 0 failed');
    expect((await cells('model_call')).map((c) => c[3])).toEqual(
      expect.arrayContaining([expect.stringMatching(/^reviewer model call: .+ → VALID_LEDGER · \d+ tokens$/)]),
    );
    expect((await cells('verdict')).map((c) => c[3])).toEqual([
      'Verdict ESCALATE (MAX_ITERATIONS) · rule MAX_ITERATIONS',
    ]);
    expect((await cells('escalation')).map((c) => c[3])).toEqual(['Escalation #1: MAX_ITERATIONS (OPEN)']);

    // Why the verdict: the explanation's sentences, naming the blocking finding — as text.
    const explanation = page.locator('#loop article.explain[data-iteration="1"] li');
    await shown(opened, explanation.first());
    const lines = await explanation.allInnerTexts();
    expect(lines[0]).toBe(
      `ESCALATE (MAX_ITERATIONS) at iteration 1 of 1: the work is not done and the iteration limit is reached. Still blocking: COR-001 BLOCKER VALID “${HOSTILE_TITLE}”.`,
    );
    expect(lines).toContain('Rule MAX_ITERATIONS: the work is not done and the iteration limit is reached.');
    expect(await page.locator('#loop img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as any).__xss)).toBeUndefined();
    fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'loop-timeline.png'), fullPage: true });

    // Back to the list; then straight to the loop by its address.
    await page.getByRole('link', { name: '← Back to the inbox' }).click();
    await shown(opened, item);
    expect(await page.locator('#loop').isHidden()).toBe(true);
    await page.goto(`${h.baseUrl}/inbox#loop/${escalated.id}`);
    await shown(opened, rows.first());
    await page.goto(`${h.baseUrl}/inbox#loop/00000000-0000-4000-8000-000000000000`);
    await shown(opened, page.locator('#status.error', { hasText: 'Not found' }));
    expect(await page.locator('#status').innerText()).toBe(
      'Not found: loop 00000000-0000-4000-8000-000000000000 was not found.',
    );

    const viewed = requests.filter((r) => r.path.includes(escalated.id)).map((r) => r.path);
    expect(viewed).toEqual(
      expect.arrayContaining([`/v1/loops/${escalated.id}/timeline`, `/v1/loops/${escalated.id}/iterations/1/explain`]),
    );
    expect(requests.every((r) => r.method === 'GET' && r.authorization === `Bearer ${h.keys.approver}`)).toBe(true);
    expect(problems).toEqual([consoleHttpError('404 (Not Found)')]);
  } finally {
    await context.close();
  }
  // Leave no open escalation behind.
  expect(
    (
      await h.request('POST', `/v1/loops/${escalated.id}/decisions`, {
        kind: 'reject',
        escalationId: escalated.escalations[0].id,
      })
    ).status,
  ).toBe(202);
  await h.waitForLoop(escalated.id, ['REJECTED']);
});

test("a loop's view shows what it is and where it stands; amend from it (a refused field is named) resumes the loop, and the view follows it to its diff", async () => {
  const { loop: escalated, repo } = await escalate(blockerLedger(SCRIPT_TITLE), {
    '1': { write: { 'src/sum.js': CORRECT_SUM } },
    '2': { write: { 'src/sum.js': `${SCRIPT_LINE}\n${CORRECT_SUM}` } },
  });

  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  try {
    await context.addInitScript((key) => {
      const storage = (globalThis as any).localStorage;
      if (!storage.getItem('escalationInbox.apiKey')) storage.setItem('escalationInbox.apiKey', key);
    }, h.keys.submitter);
    const opened = await openPage(context);
    const { page, requests, problems } = opened;
    await page.goto(`${h.baseUrl}/inbox#loop/${escalated.id}`);
    const view = page.locator('#loop');
    const field = (name: string) => view.locator(`.about dd[data-field="${name}"]`);
    await shown(opened, view.locator('li.finding'));

    expect(await field('Objective').innerText()).toBe('Make sum() add its two arguments.');
    expect(await field('Repository').innerText()).toBe(repo);
    expect(await field('Base ref').innerText()).toBe('main');
    expect(await field('Base commit').innerText()).toBe(escalated.baseCommit);
    expect(await field('Branch').innerText()).toBe(`engineering-loop/${escalated.id}`);
    expect(await field('Status').innerText()).toBe('AWAITING_DECISION');
    expect(await field('Phase').innerText()).toBe('AWAITING_DECISION');
    expect(await field('Iteration').innerText()).toBe('1 of 1 in this round (1 in all)');
    // The finding as the API gives it, every value as text: the script element in its title is characters.
    const finding = view.locator('li.finding[data-finding-id="COR-001"]');
    expect(await finding.locator('.finding-title').innerText()).toBe(`BLOCKER COR-001 ${SCRIPT_TITLE} (VALID)`);
    expect(await finding.locator('dd[data-field="Where"]').innerText()).toBe('src/sum.js:1-3');
    expect(await finding.locator('dd[data-field="Evidence"]').innerText()).toBe(
      'sum(2**53, 1) returns 9007199254740992',
    );
    expect(await finding.locator('dd[data-field="Failure scenario"]').innerText()).toBe(
      'callers adding large ids get wrong totals',
    );
    await shown(opened, view.locator('.report h4', { hasText: '6. Workspace' }));
    expect(await view.locator('.report').innerText()).toContain(SCRIPT_TITLE);
    // Before delivery, the change the decision is about: iteration 1's diff from the base.
    const change = view.locator('.diff-section');
    await shown(opened, change.locator('pre.diff'));
    expect(await change.locator('p').first().innerText()).toBe(
      `Not delivered yet: the change from the base as of iteration 1 (checkpoint ${escalated.iterations[0].checkpointCommit} on engineering-loop/${escalated.id}). The patch is written when the loop is delivered (PASSED or APPROVED).`,
    );
    expect(await change.locator('pre.diff').innerText()).toContain('+++ b/src/sum.js');
    expect(await change.locator('pre.diff span.add').allTextContents()).toContain(`+${CORRECT_SUM}`);
    for (const name of ['Approve', 'Retry with guidance', 'Reject'])
      expect(await view.getByRole('button', { name }).isEnabled()).toBe(true);

    // A submitter's key: the amend goes out and the page says why it was refused.
    const amend = view.locator('details.amend');
    await amend.locator('summary').click();
    const form = amend.locator('.amend-form');
    await form.locator('textarea[name="constraints"]').fill('Do not change the tests.\nKeep sum() a one-liner.');
    await form.getByRole('button', { name: 'Amend the contract' }).click();
    await shown(opened, form.locator('.result.error'));
    expect(await form.locator('.result').innerText()).toBe(NOT_APPROVER);

    // An approver's key; the view is drawn afresh.
    await page.locator('#api-key').fill(h.keys.approver);
    await page.locator('#api-key').press('Enter');
    await shown(opened, view.locator('details.amend:not([open])'));
    await amend.locator('summary').click();
    // JSON that does not parse is caught here; nothing is sent.
    const criteria = form.locator('textarea[name="acceptanceCriteria"]');
    const original = await criteria.inputValue();
    expect(JSON.parse(original)).toEqual(escalated.contractVersions[0].contract.acceptanceCriteria);
    await criteria.fill('[');
    await form.getByRole('button', { name: 'Amend the contract' }).click();
    expect(await form.locator('[data-field="acceptanceCriteria"] .field-error').innerText()).toMatch(
      /^Not valid JSON: /,
    );
    // What the API refuses, it names: the message is put next to that field.
    await criteria.fill(original.replace('"AC-1"', '"X-1"'));
    await form.getByRole('button', { name: 'Amend the contract' }).click();
    await shown(opened, form.locator('.result.error'));
    expect(await form.locator('.result').innerText()).toBe(
      'The API refused the amendment; the fields it named are marked above.',
    );
    expect(await form.locator('[data-field="acceptanceCriteria"] .field-error').innerText()).toBe(
      'contract.acceptanceCriteria.0.id: must look like AC-1',
    );
    expect(await criteria.getAttribute('aria-invalid')).toBe('true');

    h.llm.enqueue({ content: cleanLedger }); // the review after the amendment
    await criteria.fill(original);
    await form.locator('textarea[name="objective"]').fill('Make sum() add its two arguments exactly.');
    await form.locator('textarea[name="constraints"]').fill('Do not change the tests.\nKeep sum() a one-liner.');
    await form.locator('textarea[name="comment"]').fill('the precision finding is out of scope');
    await form.getByRole('button', { name: 'Amend the contract' }).click();
    await shown(opened, form.locator('.result.ok'));
    expect(await form.locator('.result').innerText()).toBe(
      'Decision accepted: amend accepted for escalation 1. This view follows the loop.',
    );
    expect(await criteria.getAttribute('aria-invalid')).toBeNull();

    // Without a reload, the view follows the loop through its second iteration to its delivered diff.
    await shown(opened, field('Status').filter({ hasText: /^PASSED$/ }), 180_000);
    const diff = view.locator('pre.diff');
    await shown(opened, diff);
    expect(await diff.locator('span.add', { hasText: SCRIPT_LINE }).textContent()).toBe(`+${SCRIPT_LINE}\n`);
    expect(await field('Objective').innerText()).toBe('Make sum() add its two arguments exactly.');
    expect(await view.locator('.decided-note').innerText()).toMatch(
      /^Escalation #1 is DECIDED: amend by ana \(key [0-9a-f-]{36}\)\.$/,
    );
    expect(await view.getByRole('button', { name: 'Approve' }).isDisabled()).toBe(true);
    await shown(opened, view.locator('.report strong', { hasText: 'Final report' }));
    expect(await page.locator('#loop script, #loop img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as any).__xss)).toBeUndefined();
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'loop-amended.png'), fullPage: true });

    const done = await h.waitForLoop(escalated.id, ['PASSED']);
    expect(done.contractVersions.map((c: any) => [c.version, c.contract.objective, c.contract.constraints])).toEqual([
      [1, 'Make sum() add its two arguments.', ['Do not change the tests.']],
      [2, 'Make sum() add its two arguments exactly.', ['Do not change the tests.', 'Keep sum() a one-liner.']],
    ]);
    expect(done.contractVersions[1].reason).toMatch(ANA_AMENDED);
    expect(done.iterations.map((i: any) => [i.sequence, i.contractVersion, i.verdict.verdict])).toEqual([
      [1, 1, 'ESCALATE'],
      [2, 2, 'PASS'],
    ]);
    expect(done.escalations[0].decision).toMatchObject({
      kind: 'amend',
      actor: expect.stringMatching(ANA),
      comment: 'the precision finding is out of scope',
    });

    // Only the amendments were posted; the rest were reads, the patch read once the loop was delivered.
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.authorization)).toEqual([
      `Bearer ${h.keys.submitter}`,
      `Bearer ${h.keys.approver}`,
      `Bearer ${h.keys.approver}`,
    ]);
    expect(requests.filter((r) => r.path.endsWith('/patch'))).toHaveLength(1);
    expect(requests.filter((r) => r.path.endsWith('/diff?iteration=1')).length).toBeGreaterThan(0);
    expect(problems).toEqual([consoleHttpError('403 (Forbidden)'), consoleHttpError('422 (Unprocessable Entity)')]);
  } finally {
    await context.close();
  }
}, 240_000);

test("pause and resume from a loop's view: the loop holds before its next maker, shown PAUSED, and goes on when resumed", async () => {
  const { loop: escalated } = await escalate(blockerLedger(), {
    '1': { write: { 'src/sum.js': CORRECT_SUM } },
    '2': { write: { 'src/sum.js': `// reviewed\n${CORRECT_SUM}` } },
  });
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  try {
    await context.addInitScript((key) => {
      (globalThis as any).localStorage.setItem('escalationInbox.apiKey', key);
    }, h.keys.admin);
    const opened = await openPage(context);
    const { page, problems } = opened;
    await page.goto(`${h.baseUrl}/inbox#loop/${escalated.id}`);
    const view = page.locator('#loop');
    const status = view.locator('.about dd[data-field="Status"]');
    const button = view.locator('.pause-control button');
    await shown(opened, button.filter({ hasText: 'Pause' }));

    await button.click();
    await shown(opened, view.locator('.pause-control .result.ok', { hasText: 'pauses once its current step is done' }));
    expect(await button.innerText()).toBe('Resume');

    // Sent back to the maker, the loop holds before it instead.
    const retried = await h.request(
      'POST',
      `/v1/loops/${escalated.id}/decisions`,
      { kind: 'retry', guidance: 'keep it', escalationId: escalated.escalations[0].id },
      { authorization: `Bearer ${h.keys.approver}` },
    );
    expect(retried.status).toBe(202);
    await shown(opened, status.filter({ hasText: /^PAUSED$/ }), 60_000);
    expect((await h.request('GET', `/v1/loops/${escalated.id}`)).body.iterations).toHaveLength(1);

    h.llm.enqueue({ content: cleanLedger });
    await button.filter({ hasText: 'Resume' }).click();
    await shown(opened, view.locator('.pause-control .result.ok', { hasText: 'the loop goes on' }));
    await shown(opened, status.filter({ hasText: /^PASSED$/ }), 120_000);
    expect(await view.locator('.pause-control button').count()).toBe(0);
    expect(problems).toEqual([]);
  } finally {
    await context.close();
  }
}, 240_000);
