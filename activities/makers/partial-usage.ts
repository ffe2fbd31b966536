import fs from 'node:fs/promises';
import path from 'node:path';
import type { PresetBackend } from '../../domain/maker-presets';
import { parseAgentUsage } from './presets';

// What an interrupted preset run had spent, read from the session log the CLI keeps in its per-run home
// (agent-home.ts) while it works: the CLIs print their usage only when they end, but each writes its
// running totals to disk as it goes. Read once, when the next attempt finds the run cut short.
//
//   claude-code  <home>/.claude/projects/<dir>/<session>.jsonl   each assistant message's usage (its cost-state totals once it ends)
//   codex        <home>/.codex/sessions/<y>/<m>/<d>/rollout-*.jsonl  the last token_count event's total_token_usage
//   gemini       <home>/.gemini/tmp/<project>/chats/session-*.jsonl  each model message's tokens, once per message id
//   aider        <stateDir>/aider.chat.history.md                   its "> Tokens: … sent, … received." lines

export interface PartialUsage {
  model: string | null;
  promptTokens: number;
  completionTokens: number;
  costUsd: number | null;
}

/** What the log says, and when the CLI last wrote it (ms since the epoch): it was alive then. */
export type SessionLogUsage = PartialUsage & { lastWrittenAt: number };

const MAX_LOG_BYTES = 32 * 1024 * 1024;

export async function readPartialUsage(backend: PresetBackend, stateDir: string): Promise<SessionLogUsage | null> {
  const home = path.join(stateDir, 'home');
  try {
    const files =
      backend === 'aider'
        ? [path.join(stateDir, 'aider.chat.history.md')]
        : await filesUnder(path.join(home, ...SESSION_LOGS[backend]), '.jsonl');
    const usage =
      backend === 'aider'
        ? aiderUsage(await fs.readFile(files[0]!, 'utf8'))
        : { 'claude-code': claudeUsage, codex: codexUsage, gemini: geminiUsage }[backend](await readLines(files));
    if (!usage) return null;
    const written = await Promise.all(files.map((f) => fs.stat(f).then((s) => s.mtimeMs)));
    return { ...usage, lastWrittenAt: Math.max(...written) };
  } catch {
    // No log (it never got that far) or one it left half-written: nothing is known.
    return null;
  }
}

/** Where under the run's home each JSONL-logging CLI keeps its sessions. */
const SESSION_LOGS = {
  'claude-code': ['.claude', 'projects'],
  codex: ['.codex', 'sessions'],
  gemini: ['.gemini', 'tmp'],
} as const;

function claudeUsage(lines: Json[]): PartialUsage | null {
  const state = lines.filter((l) => l.type === 'cost-state').at(-1);
  // At its end it writes its totals, in its final result's modelUsage shape: the result parser reads them.
  if (state) {
    const totals = { type: 'result', modelUsage: state.modelUsage, total_cost_usd: state.totalCostUSD };
    return known(parseAgentUsage('claude-code', JSON.stringify(totals), ''));
  }
  // Mid-run: each model answer's usage, once per message id (a streamed answer can be logged in parts).
  const answers = new Map<string, Json>();
  for (const line of lines) {
    const message = obj(line.message);
    if (line.type === 'assistant' && typeof message?.id === 'string') answers.set(message.id, message);
  }
  if (answers.size === 0) return null;
  let promptTokens = 0;
  let completionTokens = 0;
  const models = new Set<string>();
  for (const message of answers.values()) {
    const usage = obj(message.usage);
    promptTokens +=
      num(usage?.input_tokens) + num(usage?.cache_creation_input_tokens) + num(usage?.cache_read_input_tokens);
    completionTokens += num(usage?.output_tokens);
    if (typeof message.model === 'string') models.add(message.model);
  }
  return { model: models.size ? [...models].join(',') : null, promptTokens, completionTokens, costUsd: null };
}

function codexUsage(lines: Json[]): PartialUsage | null {
  const model = lines.flatMap((l) => (l.type === 'turn_context' ? [obj(l.payload)?.model] : [])).at(-1);
  const total = lines
    .flatMap((l) => {
      const payload = obj(l.payload);
      return l.type === 'event_msg' && payload?.type === 'token_count'
        ? [obj(obj(payload.info)?.total_token_usage)]
        : [];
    })
    .filter((t) => t !== null)
    .at(-1);
  if (!total) return null;
  return {
    model: typeof model === 'string' ? model : null,
    promptTokens: num(total.input_tokens),
    completionTokens: num(total.output_tokens),
    costUsd: null,
  };
}

function geminiUsage(lines: Json[]): PartialUsage | null {
  // Messages are appended, and rewritten whole by {"$set": {"messages": […]}}: the last copy of each counts.
  const messages = new Map<string, Json>();
  for (const line of lines) {
    const set = obj(line.$set)?.messages;
    for (const m of Array.isArray(set) ? set : [line]) {
      const message = obj(m);
      if (message?.type === 'gemini' && typeof message.id === 'string') messages.set(message.id, message);
    }
  }
  if (messages.size === 0) return null;
  const byModel = new Map<string, number>();
  let promptTokens = 0;
  let completionTokens = 0;
  for (const message of messages.values()) {
    const tokens = obj(message.tokens);
    promptTokens += num(tokens?.input);
    completionTokens += num(tokens?.output) + num(tokens?.thoughts);
    if (typeof message.model === 'string')
      byModel.set(message.model, (byModel.get(message.model) ?? 0) + num(tokens?.total));
  }
  const models = [...byModel].sort((a, b) => b[1] - a[1]).map(([name]) => name);
  return { model: models.length ? models.join(',') : null, promptTokens, completionTokens, costUsd: null };
}

function aiderUsage(history: string): PartialUsage | null {
  // Aider's tool output is quoted ("> ") in its chat history: the same lines it prints.
  return known(parseAgentUsage('aider', history.replace(/^> /gm, ''), ''));
}

function known(usage: ReturnType<typeof parseAgentUsage>): PartialUsage | null {
  if (usage.promptTokens === null && usage.completionTokens === null) return null;
  return {
    model: usage.model,
    promptTokens: usage.promptTokens ?? 0,
    completionTokens: usage.completionTokens ?? 0,
    costUsd: usage.costUsd,
  };
}

type Json = Record<string, unknown>;

function obj(value: unknown): Json | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

async function filesUnder(dir: string, suffix: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(suffix))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** Every JSON object line of `files`, in order; a line cut off mid-write is skipped. */
async function readLines(files: string[]): Promise<Json[]> {
  const lines: Json[] = [];
  for (const file of files) {
    const handle = await fs.open(file, 'r');
    try {
      const { size } = await handle.stat();
      const buffer = Buffer.alloc(Math.min(size, MAX_LOG_BYTES));
      await handle.read(buffer, 0, buffer.length, Math.max(0, size - buffer.length));
      for (const raw of buffer.toString('utf8').split('\n')) {
        try {
          const parsed = obj(JSON.parse(raw));
          if (parsed) lines.push(parsed);
        } catch {
          // Not a whole JSON line.
        }
      }
    } finally {
      await handle.close();
    }
  }
  return lines;
}
