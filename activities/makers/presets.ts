// Headless invocations of the coding-agent CLIs a maker preset names, and readers for the usage each
// tool reports about itself. Every flag below is the tool's documented CLI; the parsers read only what
// the tool printed and return null for anything it did not print (docs/design.md §5.3: record, never estimate).
import path from 'node:path';
import type { PresetBackend, PresetMakerSettings } from '../../domain/maker-presets';

export interface PresetInvocation {
  /** argv[0] is settings.binaryPath; run without a shell, in the workspace. */
  argv: string[];
  /** What to write to the child's stdin; undefined: close it empty (the tool reads its prompt elsewhere). */
  stdin: string | undefined;
}

/** What a run of a preset is given besides its settings. */
export interface PresetRun {
  prompt: string;
  /** The prompt as a file (read-only to the agent). */
  promptFile: string;
  /** The run's writable control directory: the CLI's home (agent-home.ts), its history and log files. */
  stateDir: string;
  /** The operator's <PREFIX>_MODEL, used when the request names none; null: the CLI's own default. */
  defaultModel: string | null;
  /** The loop's gate commands: the agent may run these to check its work as the judge will. */
  gateCommands: string[][];
}

/**
 * Builds the documented headless command line for a preset. Each CLI runs in our sandbox
 * (docs/threat-model.md), so its own sandbox and approval prompts are off wherever the CLI allows it,
 * and nobody is there to answer a prompt anyway.
 *
 * claude-code — `claude -p --output-format json --permission-mode acceptEdits --allowedTools <gates>
 *   [--model M] [extra…]`, prompt on stdin. `-p` runs one non-interactive turn; `--output-format json`
 *   prints one result object (result, session_id, total_cost_usd, usage, modelUsage per model, is_error).
 *   In print mode anything that would prompt is denied: `acceptEdits` approves file edits in the working
 *   directory, and `--allowedTools "Bash(<gate command>:*)"` the loop's own gate commands, so the agent
 *   can run the tests as the judge will. Other shell commands (`git commit`) stay denied.
 *   `--dangerously-skip-permissions` refuses to run as root, which SANDBOX=none would be.
 *
 * codex — `codex exec --json --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check [--model M]
 *   [extra…] -`, prompt on stdin. `exec` is the non-interactive mode; `--json` prints JSONL events
 *   (thread.started, item.completed, turn.completed with usage). Codex's own sandbox cannot start inside
 *   ours (it wants its helper outside /tmp and namespaces bwrap already took), and its documentation
 *   says to bypass it when an outer sandbox confines it — ours does. `-` reads the prompt from stdin.
 *
 * aider — `aider --message-file <promptFile> --yes-always --no-auto-commits --no-dirty-commits
 *   --no-gitignore --chat-history-file <state>/aider.chat.history.md --input-history-file
 *   <state>/aider.input.history --llm-history-file <state>/aider.llm.history --no-pretty --no-stream
 *   --no-check-update --no-show-release-notes --no-show-model-warnings --analytics-disable [--model M]
 *   [extra…]`, stdin closed empty. `--message-file` sends one message and exits; `--yes-always` answers
 *   its confirmations. The loop commits checkpoints itself, so Aider must not: `--no-auto-commits`,
 *   `--no-dirty-commits`. Git stays on for its repo map; `--no-gitignore` keeps it from adding `.aider*`
 *   to .gitignore (its tags cache, `.aider.tags.cache.v4`, is excluded from checkpoints instead). Its
 *   history files go to the run's state directory, outside the working tree.
 *
 * gemini — `gemini --prompt "Carry out the task above." --output-format json --yolo [--model M] [extra…]`,
 *   the task on stdin (Gemini CLI puts piped input before the --prompt text). `--output-format json` prints
 *   one object (response, stats.models per model with its tokens, error). `--yolo` approves every tool
 *   call, shell included: our sandbox confines it (its own sandbox is off unless asked for), and `.git` is
 *   read-only to it, so it cannot commit.
 */
export function buildPresetInvocation(settings: PresetMakerSettings, run: PresetRun): PresetInvocation {
  const chosen = settings.model ?? run.defaultModel;
  const model = chosen ? ['--model', chosen] : [];
  switch (settings.backend) {
    case 'claude-code':
      return {
        argv: [
          settings.binaryPath,
          '-p',
          '--output-format',
          'json',
          '--permission-mode',
          'acceptEdits',
          ...(run.gateCommands.length
            ? ['--allowedTools', run.gateCommands.map((c) => `Bash(${shellWords(c)}:*)`).join(',')]
            : []),
          ...model,
          ...settings.extraArgs,
        ],
        stdin: run.prompt,
      };
    case 'codex':
      return {
        argv: [
          settings.binaryPath,
          'exec',
          '--json',
          '--dangerously-bypass-approvals-and-sandbox',
          '--skip-git-repo-check',
          ...model,
          ...settings.extraArgs,
          '-',
        ],
        stdin: run.prompt,
      };
    case 'aider':
      return {
        argv: [
          settings.binaryPath,
          '--message-file',
          run.promptFile,
          '--yes-always',
          '--no-auto-commits',
          '--no-dirty-commits',
          '--no-gitignore',
          '--chat-history-file',
          path.join(run.stateDir, 'aider.chat.history.md'),
          '--input-history-file',
          path.join(run.stateDir, 'aider.input.history'),
          '--llm-history-file',
          path.join(run.stateDir, 'aider.llm.history'),
          '--no-pretty',
          '--no-stream',
          '--no-check-update',
          '--no-show-release-notes',
          '--no-show-model-warnings',
          '--analytics-disable',
          ...model,
          ...settings.extraArgs,
        ],
        stdin: undefined,
      };
    case 'gemini':
      return {
        argv: [
          settings.binaryPath,
          '--prompt',
          'Carry out the task above.',
          '--output-format',
          'json',
          '--yolo',
          ...model,
          ...settings.extraArgs,
        ],
        stdin: run.prompt,
      };
  }
}

/** argv as one shell command line (Claude Code's permission rules match the command's text). */
function shellWords(argv: string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

export interface AgentUsage {
  /** The model(s) the agent reported using; several are joined with "," (costliest first). */
  model: string | null;
  /** All input tokens the tool reported (Claude: uncached + cache writes + cache reads). */
  promptTokens: number | null;
  completionTokens: number | null;
  costUsd: number | null;
  /** Claude session_id, Codex thread_id: what `--resume` takes. */
  sessionId: string | null;
  /** The tool's own structured error flag; the exit code is judged separately. */
  isError: boolean;
  /** The agent's final message, when it reports one as such. */
  summary: string | null;
  /** The HTTP status of the model API's error that ended the run, when the tool reports it (Claude's api_error_status). */
  apiErrorStatus: number | null;
}

const NOTHING_REPORTED: AgentUsage = {
  model: null,
  promptTokens: null,
  completionTokens: null,
  costUsd: null,
  sessionId: null,
  isError: false,
  summary: null,
  apiErrorStatus: null,
};

const SUMMARY_CAP = 4000;

/** Reads the usage an agent printed about itself. 'command' (or anything unknown) reports nothing. */
export function parseAgentUsage(backend: PresetBackend | 'command', stdout: string, stderr: string): AgentUsage {
  switch (backend) {
    case 'claude-code':
      return parseClaudeUsage(stdout);
    case 'codex':
      return parseCodexUsage(stdout);
    case 'aider':
      return parseAiderUsage(`${stdout}\n${stderr}`);
    case 'gemini':
      return parseGeminiUsage(stdout, stderr);
    default:
      return { ...NOTHING_REPORTED };
  }
}

/** The agent's answer as text: Claude's `result`, Codex's last agent message, otherwise stdout as is. */
export function extractAgentText(backend: PresetBackend | 'command', stdout: string): string {
  switch (backend) {
    case 'claude-code': {
      const result = claudeResult(stdout);
      return typeof result?.result === 'string' ? result.result : stdout;
    }
    case 'codex':
      return codexEvents(stdout).lastAgentMessage ?? stdout;
    case 'gemini':
      return text(geminiResult(stdout, '')?.response) ?? stdout;
    default:
      return stdout;
  }
}

// ---- Claude Code: one JSON result object ------------------------------------------------------------
// { type: "result", subtype, is_error, result, session_id, total_cost_usd,
//   usage: { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens },
//   modelUsage: { "<model>": { inputTokens, outputTokens, cacheReadInputTokens, cacheCreationInputTokens, costUSD } } }

type Json = Record<string, unknown>;

function claudeResult(stdout: string): Json | null {
  const whole = parseObject(stdout.trim());
  if (whole?.type === 'result') return whole;
  // stream-json (or stray lines around the object): the result is the last line of type "result".
  const lines = stdout.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = parseObject(lines[i]!.trim());
    if (line?.type === 'result') return line;
  }
  return null;
}

function parseClaudeUsage(stdout: string): AgentUsage {
  const result = claudeResult(stdout);
  if (!result) return { ...NOTHING_REPORTED };
  const modelUsage = asObject(result.modelUsage);
  // `usage` covers the main model only; modelUsage has every model the run called (a small model for
  // side tasks, sub-agents), so when it is there its sums are the run's tokens.
  const perModel = modelUsage ? claudeModelTotals(modelUsage) : null;
  const usage = asObject(result.usage);
  const input = count(usage?.input_tokens);
  const cacheWrite = count(usage?.cache_creation_input_tokens);
  const cacheRead = count(usage?.cache_read_input_tokens);
  return {
    model: modelUsage ? claudeModels(modelUsage) : null,
    promptTokens: perModel?.input ?? (input === null ? null : input + (cacheWrite ?? 0) + (cacheRead ?? 0)),
    completionTokens: perModel?.output ?? count(usage?.output_tokens),
    costUsd: money(result.total_cost_usd),
    sessionId: text(result.session_id),
    isError: result.is_error === true,
    summary: capped(text(result.result)),
    apiErrorStatus: count(result.api_error_status),
  };
}

/** Input (uncached + cache writes + cache reads) and output tokens summed over modelUsage; null if it has none. */
function claudeModelTotals(modelUsage: Json): { input: number; output: number } | null {
  let input = 0;
  let output = 0;
  let seen = false;
  for (const row of Object.values(modelUsage)) {
    const m = asObject(row);
    const tokens = count(m?.inputTokens);
    if (!m || tokens === null) continue;
    seen = true;
    input += tokens + (count(m.cacheCreationInputTokens) ?? 0) + (count(m.cacheReadInputTokens) ?? 0);
    output += count(m.outputTokens) ?? 0;
  }
  return seen ? { input, output } : null;
}

function claudeModels(modelUsage: Json): string | null {
  const models = Object.entries(modelUsage)
    .map(([name, row]) => ({ name, cost: money(asObject(row)?.costUSD) ?? 0 }))
    .filter((m) => m.name.trim() !== '')
    .sort((a, b) => b.cost - a.cost);
  return models.length ? models.map((m) => m.name).join(',') : null;
}

// ---- Codex: JSONL events from `codex exec --json` ----------------------------------------------------
// {"type":"thread.started","thread_id":"…"}  {"type":"item.completed","item":{"id","type":"agent_message","text"}}
// {"type":"turn.completed","usage":{"input_tokens","cached_input_tokens","output_tokens"}}
// {"type":"turn.failed","error":{"message"}}  {"type":"error","message"}
// Usage in turn.completed is the thread's running total, so the last one counts. Codex prints neither
// the model nor a cost in these events: both stay null.

function codexEvents(stdout: string): {
  threadId: string | null;
  usage: Json | null;
  lastAgentMessage: string | null;
  failed: boolean;
  seen: boolean;
} {
  let threadId: string | null = null;
  let usage: Json | null = null;
  let lastAgentMessage: string | null = null;
  let failed = false;
  let seen = false;
  for (const raw of stdout.split('\n')) {
    const event = parseObject(raw.trim());
    if (!event || typeof event.type !== 'string') continue;
    seen = true;
    switch (event.type) {
      case 'thread.started':
        threadId = text(event.thread_id) ?? threadId;
        break;
      case 'turn.completed':
        usage = asObject(event.usage) ?? usage;
        break;
      case 'turn.failed':
      case 'error':
        failed = true;
        break;
      case 'item.completed': {
        const item = asObject(event.item);
        if (item?.type === 'agent_message' && typeof item.text === 'string') lastAgentMessage = item.text;
        break;
      }
    }
  }
  return { threadId, usage, lastAgentMessage, failed, seen };
}

function parseCodexUsage(stdout: string): AgentUsage {
  const events = codexEvents(stdout);
  if (!events.seen) return { ...NOTHING_REPORTED };
  return {
    model: null,
    // OpenAI's input_tokens already include the cached ones (cached_input_tokens is a subset).
    promptTokens: count(events.usage?.input_tokens),
    completionTokens: count(events.usage?.output_tokens),
    costUsd: null,
    sessionId: events.threadId,
    isError: events.failed,
    summary: capped(events.lastAgentMessage),
    apiErrorStatus: null,
  };
}

// ---- Gemini CLI: one JSON object from `--output-format json` -----------------------------------------
// { session_id, response, stats: { models: { "<model>": { tokens: { prompt, candidates, thoughts, total, … } } } },
//   error?: { type, message, code } }. On failure the object goes to stderr, after the error's trace, which
// ends with the HTTP status as `code: 404`; an argument it does not take is reported (by yargs) above its
// help text. It prints no cost.

const GEMINI_API_STATUS = /^\s+code: ([45]\d\d)$/m;
const GEMINI_USAGE_ERROR =
  /^(?:Unknown arguments?|Invalid values?|Not enough arguments|Missing required argument)\b.*$/m;

function geminiResult(stdout: string, stderr: string): Json | null {
  const printed = parseObject(stdout.trim());
  if (printed) return printed;
  const at = stderr.lastIndexOf('\n{');
  return parseObject((at === -1 ? stderr : stderr.slice(at)).trim());
}

function parseGeminiUsage(stdout: string, stderr: string): AgentUsage {
  const result = geminiResult(stdout, stderr);
  if (!result) return { ...NOTHING_REPORTED, summary: GEMINI_USAGE_ERROR.exec(stderr)?.[0] ?? null };
  let input = 0;
  let output = 0;
  const models: Array<{ name: string; total: number }> = [];
  for (const [name, row] of Object.entries(asObject(asObject(result.stats)?.models) ?? {})) {
    const tokens = asObject(asObject(row)?.tokens);
    const prompt = count(tokens?.prompt);
    if (!tokens || prompt === null) continue;
    input += prompt;
    // Thinking tokens are billed as output.
    output += (count(tokens.candidates) ?? 0) + (count(tokens.thoughts) ?? 0);
    models.push({ name, total: count(tokens.total) ?? 0 });
  }
  const error = asObject(result.error);
  const status = GEMINI_API_STATUS.exec(stderr)?.[1];
  return {
    model: models.length
      ? models
          .sort((a, b) => b.total - a.total)
          .map((m) => m.name)
          .join(',')
      : null,
    promptTokens: models.length ? input : null,
    completionTokens: models.length ? output : null,
    costUsd: null,
    sessionId: text(result.session_id),
    isError: error !== null,
    summary: capped(text(result.response) ?? text(error?.message)),
    apiErrorStatus: status ? Number(status) : null,
  };
}

// ---- Aider: human-readable lines ---------------------------------------------------------------------
// "Model: <name> with <format> edit format…" or "Main model: <name> with …" at start-up;
// after each LLM call "Tokens: 2.3k sent, 1.1k cache write, 4.0k cache hit, 512 received. Cost: $0.01
// message, $0.03 session." (cache parts and the Cost part only when known). Counts use aider's own
// rounding (k = thousands, M = millions); each Tokens line covers one call, so they add up, and the
// last "session" cost is the process total.

const AIDER_MODEL = /^(?:Main model|Model): (\S+) with /m;
const AIDER_TOKENS =
  /^Tokens: ([\d.]+[kKmM]?) sent(?:, [\d.]+[kKmM]? cache write)?(?:, [\d.]+[kKmM]? cache hit)?, ([\d.]+[kKmM]?) received\./gm;
const AIDER_SESSION_COST = /Cost: \$([\d.]+) message, \$([\d.]+) session\./g;

function parseAiderUsage(output: string): AgentUsage {
  let sent: number | null = null;
  let received: number | null = null;
  for (const match of output.matchAll(AIDER_TOKENS)) {
    const s = abbreviatedCount(match[1]!);
    const r = abbreviatedCount(match[2]!);
    if (s === null || r === null) continue;
    sent = (sent ?? 0) + s;
    received = (received ?? 0) + r;
  }
  let cost: number | null = null;
  for (const match of output.matchAll(AIDER_SESSION_COST)) cost = money(Number(match[2]));
  return {
    ...NOTHING_REPORTED,
    model: AIDER_MODEL.exec(output)?.[1] ?? null,
    promptTokens: sent,
    completionTokens: received,
    costUsd: cost,
  };
}

/** "512" → 512, "2.3k" → 2300, "1.2M" → 1200000 (aider's format_tokens). */
export function abbreviatedCount(value: string): number | null {
  const match = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(value.trim());
  if (!match) return null;
  const scale = match[2] === '' ? 1 : match[2]!.toLowerCase() === 'k' ? 1_000 : 1_000_000;
  return Math.round(Number(match[1]) * scale);
}

// ---- helpers -----------------------------------------------------------------------------------------

function parseObject(line: string): Json | null {
  if (!line.startsWith('{')) return null;
  try {
    return asObject(JSON.parse(line));
  } catch {
    return null;
  }
}

function asObject(value: unknown): Json | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;
}

function money(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function capped(value: string | null): string | null {
  if (value === null) return null;
  return value.length > SUMMARY_CAP ? `${value.slice(0, SUMMARY_CAP)}…` : value;
}
