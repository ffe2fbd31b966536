import { ApiError, ConnectionError, type ApiClient } from '../api-client';
import type { LoopDetail, TimelineEvent } from '../api-types';
import type { Context } from '../command';
import { CliError } from '../errors';
import { EXIT_AWAITING_DECISION, EXIT_ERROR, exitCodeOfStatus } from '../exit-codes';
import { duration } from '../render/format';
import { decideHint } from '../render/loop';
import { shapeProblems, timelineEventSchema } from '../timeline-schema';
import { EventView } from './event-view';
import { LiveLine } from './live-line';
import { Reconnection } from './reconnect';
import { SseParser, type SseMessage } from './sse-parser';

// `watch`: follows the loop's event stream (GET /v1/loops/:id/events) until the loop ends or waits for a
// person, printing each event as it comes. The stream starts with everything that happened, so nothing is
// missed however fast the loop moves; when it breaks (the API restarting, a proxy timing out) `watch`
// reconnects with the id of the last event it got and carries on from there, for as long as --timeout allows.

/** Three heartbeats missed (the API sends one every 15 s): the connection is dead though nothing said so. */
const IDLE_MS = 45_000;

export async function followLoop(loopId: string, ctx: Context, timeoutMs: number): Promise<number> {
  const api = ctx.api();
  const live = new LiveLine(ctx.io);
  const reconnection = new Reconnection(timeoutMs);
  try {
    const loop = await firstLook(api, loopId, reconnection, live);
    const follower = new Follower(loopId, ctx, live, loop);
    let lastEventId = '';
    for (;;) {
      let cut: unknown;
      try {
        const parser = new SseParser();
        for await (const chunk of textStream(api, loopId, lastEventId)) {
          reconnection.answered();
          for (const message of parser.push(chunk)) {
            lastEventId = message.lastEventId;
            reconnection.progressed();
            const exitCode = await follower.take(message);
            if (exitCode !== null) return exitCode;
          }
        }
        cut = new ConnectionError(`the API at ${api.baseUrl} ended the event stream`);
      } catch (error) {
        if (error instanceof ApiError && error.routeNotFound) throw tooOld(api);
        cut = error;
      }
      const delay = reconnection.delayAfter(cut);
      live.notice(`warning: ${(cut as Error).message.split('\n')[0]}; reconnecting in ${duration(delay)}`);
      await sleep(delay);
    }
  } finally {
    live.stop();
  }
}

/** The loop before its stream: its iteration limit and age for the live line, and a 404 said plainly. */
async function firstLook(
  api: ApiClient,
  loopId: string,
  reconnection: Reconnection,
  live: LiveLine,
): Promise<LoopDetail> {
  for (;;) {
    try {
      const loop = (await api.get<LoopDetail>(`/v1/loops/${loopId}`)).body;
      reconnection.answered();
      return loop;
    } catch (error) {
      const delay = reconnection.delayAfter(error);
      live.notice(`warning: ${(error as Error).message.split('\n')[0]}; trying again in ${duration(delay)}`);
      await sleep(delay);
    }
  }
}

/** The stream's text, cut (as a ConnectionError) when nothing at all arrives for IDLE_MS. */
async function* textStream(api: ApiClient, loopId: string, lastEventId: string): AsyncGenerator<string> {
  const controller = new AbortController();
  const silence = () =>
    controller.abort(new ConnectionError(`the API at ${api.baseUrl} sent nothing for ${duration(IDLE_MS)}`));
  let timer = setTimeout(silence, IDLE_MS);
  try {
    const headers: Record<string, string> = lastEventId ? { 'last-event-id': lastEventId } : {};
    for await (const chunk of api.textStream(`/v1/loops/${loopId}/events`, headers, controller.signal)) {
      clearTimeout(timer);
      timer = setTimeout(silence, IDLE_MS);
      yield chunk;
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

/** What `watch` does with each message of the stream; an exit code once the loop ended or waits. */
class Follower {
  private readonly view: EventView;

  constructor(
    private readonly loopId: string,
    private readonly ctx: Context,
    private readonly live: LiveLine,
    private readonly loop: LoopDetail,
  ) {
    this.view = new EventView(loop.maxIterations);
    // Until the stream's first phase: what the loop said (all a loop recorded before phase events has).
    this.view.state = { status: loop.status, phase: loop.phase, roundIteration: loop.iteration };
  }

  async take(message: SseMessage): Promise<number | null> {
    const data = parseData(message);
    if (this.ctx.json) this.ctx.io.out(JSON.stringify({ id: message.lastEventId || null, event: message.event, data }));
    if (message.event === 'end') return this.finish(data as { status: string });
    if (message.event !== 'message') return null;
    const event = parseEvent(data);
    if (!this.ctx.json) for (const line of this.view.add(event)) this.live.print(line);
    const awaited = this.view.awaitedEscalation();
    if (awaited) {
      this.live.stop();
      this.say(decideHint(this.loopId, awaited));
      return EXIT_AWAITING_DECISION;
    }
    const state = this.view.state;
    if (state) {
      const age = duration(Date.now() - Date.parse(this.loop.createdAt));
      this.live.status(
        `${state.status} · ${state.phase} · iteration ${state.roundIteration}/${this.loop.maxIterations} · ${age}`,
      );
    }
    return null;
  }

  /** The loop has ended: how, with its failure reason and delivery when the API still answers. */
  private async finish(end: { status: string }): Promise<number> {
    this.live.stop();
    let loop: LoopDetail | null = null;
    try {
      loop = (await this.ctx.api().get<LoopDetail>(`/v1/loops/${this.loopId}`)).body;
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
    }
    const status = String(end.status);
    const exitCode = exitCodeOfStatus(status) ?? EXIT_ERROR;
    const reason = exitCode !== 0 && loop?.failureReason ? `: ${loop.failureReason}` : '';
    this.say(`loop ${this.loopId} ended ${status}${reason}`);
    const delivery = loop?.delivery;
    if (delivery?.pullRequestUrl) this.say(`pull request: ${delivery.pullRequestUrl}`);
    else if (delivery?.pushedBranch) this.say(`pushed branch: ${delivery.pushedBranch}`);
    if (delivery?.deliveryError) this.say(`delivery: ${delivery.deliveryError}`);
    return exitCode;
  }

  /** With --json, stdout carries only JSON: the closing words go to stderr. */
  private say(text: string): void {
    if (this.ctx.json) this.ctx.io.err(text);
    else this.ctx.io.out(text);
  }
}

function parseData(message: SseMessage): unknown {
  try {
    return JSON.parse(message.data);
  } catch {
    throw new CliError(`the event stream sent something that is not JSON: ${message.data.slice(0, 200)}`);
  }
}

function parseEvent(data: unknown): TimelineEvent {
  const parsed = timelineEventSchema.safeParse(data);
  if (!parsed.success)
    throw new CliError(`the event stream sent an event of an unexpected shape (${shapeProblems(parsed.error)})`);
  return parsed.data;
}

function tooOld(api: ApiClient): CliError {
  return new CliError(
    `the server at ${api.baseUrl} is too old for watch: it has no GET /v1/loops/:id/events`,
    'upgrade the service, or use: engineering-loop show',
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
