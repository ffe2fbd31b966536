import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import vm from 'node:vm';
import { z } from 'zod';
import { childEnvironment } from '../process/child-environment';
import { runCommand } from '../process/run-command';
import type { Sandbox } from '../sandbox/types';
import { confinePath, refuseGitInternals, ToolRefusal, type ConfinedPath } from './workspace-paths';

// The built-in maker's tools over one workspace. Every path goes through confinePath(); commands run
// only when their argv starts with an allowed prefix, through runCommand (no shell, child environment
// without the service's secrets, path arguments confined). A tool never throws at the agent loop: a
// refusal or failure comes back as { ok: false, output } so the model can read it and recover. Only
// cancellation (the activity's abort signal) is rethrown.

export interface ToolContext {
  /** The workspace root as a realpath (workspaceRoot()). */
  root: string;
  /** The agent's commands run confined like the maker itself: the working tree writable, `.git` not, no network. */
  sandbox: Sandbox;
  allowedCommands: string[][];
  commandTimeoutMs: number;
  signal?: AbortSignal;
  heartbeat?: () => void;
}

export interface ToolOutcome {
  ok: boolean;
  /** What the model is sent as the tool result. */
  output: string;
  /** One line for the run record. */
  summary: string;
}

const READ_SIZE_LIMIT = 4 * 1024 * 1024;
const READ_OUTPUT_CHARS = 64 * 1024;
const WRITE_SIZE_LIMIT = 2 * 1024 * 1024;
const LIST_LIMIT = 1000;
const SEARCH_MATCH_LIMIT = 200;
const SEARCH_FILE_SIZE_LIMIT = 1024 * 1024;
const SEARCH_LINE_CHARS = 240;
const SEARCH_REGEX_BUDGET_MS = 3000;
const COMMAND_OUTPUT_CAP = 32 * 1024;
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);

const readFileInput = z.object({
  path: z.string().describe('File path relative to the workspace root.'),
  startLine: z.number().int().min(1).optional().describe('First line to return (1-based, inclusive).'),
  endLine: z.number().int().min(1).optional().describe('Last line to return (1-based, inclusive).'),
});
const listFilesInput = z.object({
  path: z.string().optional().describe('Directory relative to the workspace root; the root when omitted.'),
});
const searchFilesInput = z.object({
  pattern: z.string().min(1).describe('Text to search for; a JavaScript regular expression when regex is true.'),
  regex: z.boolean().optional().describe('Treat pattern as a regular expression (default: literal text).'),
  path: z
    .string()
    .optional()
    .describe('Directory or file to search, relative to the workspace root; the root when omitted.'),
});
const writeFileInput = z.object({
  path: z.string().describe('File path relative to the workspace root; parent directories are created.'),
  content: z.string().describe('The complete new content of the file.'),
});
const replaceInFileInput = z.object({
  path: z.string().describe('File path relative to the workspace root.'),
  old: z.string().min(1).describe('Exact text to replace; it must occur exactly once in the file.'),
  new: z.string().describe('Replacement text.'),
});
const runCommandInput = z.object({
  argv: z.array(z.string()).min(1).describe('Program and arguments, run directly (no shell) in the workspace root.'),
});

interface ToolDefinition<S extends z.ZodType> {
  description: string;
  inputSchema: S;
  run(input: z.infer<S>, ctx: ToolContext): Promise<ToolOutcome>;
}

function defineTool<S extends z.ZodType>(definition: ToolDefinition<S>): ToolDefinition<S> {
  return definition;
}

export const WORKSPACE_TOOLS = {
  read_file: defineTool({
    description: 'Read a text file in the workspace, optionally only a range of lines.',
    inputSchema: readFileInput,
    run: readFileTool,
  }),
  list_files: defineTool({
    description: 'List files under a directory of the workspace, recursively (skips .git and node_modules).',
    inputSchema: listFilesInput,
    run: listFilesTool,
  }),
  search_files: defineTool({
    description:
      'Search the text files of the workspace for a literal string or a regular expression; returns path:line: text.',
    inputSchema: searchFilesInput,
    run: searchFilesTool,
  }),
  write_file: defineTool({
    description: 'Create or overwrite a file in the workspace with the given content.',
    inputSchema: writeFileInput,
    run: writeFileTool,
  }),
  replace_in_file: defineTool({
    description: 'Replace one exact, unique occurrence of `old` with `new` in a workspace file.',
    inputSchema: replaceInFileInput,
    run: replaceInFileTool,
  }),
  run_command: defineTool({
    description:
      'Run a command in the workspace root (no shell). Only commands starting with an allowed prefix may run.',
    inputSchema: runCommandInput,
    run: runCommandTool,
  }),
} as const;

export type WorkspaceToolName = keyof typeof WORKSPACE_TOOLS;

export function isWorkspaceTool(name: string): name is WorkspaceToolName {
  return Object.prototype.hasOwnProperty.call(WORKSPACE_TOOLS, name);
}

/** The tools' input schemas as JSON Schema, for the model's tool declarations. */
export function toolJsonSchema(name: WorkspaceToolName): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(WORKSPACE_TOOLS[name].inputSchema) as Record<string, unknown>;
  return schema;
}

/** The description of run_command including the allowed prefixes, so the model does not guess. */
export function toolDescription(name: WorkspaceToolName, allowedCommands: string[][]): string {
  const base = WORKSPACE_TOOLS[name].description;
  if (name !== 'run_command') return base;
  const allowed = allowedCommands.length ? allowedCommands.map((prefix) => JSON.stringify(prefix)).join(', ') : 'none';
  return `${base} Allowed argv prefixes: ${allowed}.`;
}

/** Validates and runs one tool call. Never throws, except when the activity is cancelled. */
export async function executeWorkspaceTool(name: string, input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  ctx.signal?.throwIfAborted();
  if (!isWorkspaceTool(name)) {
    const known = Object.keys(WORKSPACE_TOOLS).join(', ');
    return failure(`unknown tool "${name}"; the available tools are ${known}`, `unknown tool ${name}`);
  }
  const definition = WORKSPACE_TOOLS[name] as ToolDefinition<z.ZodType>;
  const parsed = definition.inputSchema.safeParse(input);
  if (!parsed.success) {
    return failure(
      `the arguments of ${name} do not match its schema: ${z.prettifyError(parsed.error)}`,
      `${name}: invalid arguments`,
    );
  }
  try {
    return await definition.run(parsed.data, ctx);
  } catch (error) {
    ctx.signal?.throwIfAborted();
    if (error instanceof ToolRefusal) return failure(`refused: ${error.message}`, `${name} refused: ${error.message}`);
    const message = describeFsError(error);
    return failure(`${name} failed: ${message}`, `${name} failed: ${message}`);
  }
}

function failure(output: string, summary: string): ToolOutcome {
  return { ok: false, output: `error: ${output}`, summary };
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EISDIR') return 'it is a directory, not a file';
  if (code === 'ENOTDIR') return 'a component of the path is not a directory';
  if (code === 'ELOOP') return 'the path is a symlink (refused)';
  return error instanceof Error ? error.message : String(error);
}

async function readFileTool(input: z.infer<typeof readFileInput>, ctx: ToolContext): Promise<ToolOutcome> {
  const target = await confinePath(ctx.root, input.path);
  const info = await stat(target.absolute);
  if (info.isDirectory()) throw new ToolRefusal(`"${input.path}" is a directory; use list_files`);
  if (info.size > READ_SIZE_LIMIT)
    throw new ToolRefusal(`"${input.path}" is ${info.size} bytes, more than read_file handles`);
  const buffer = await readFile(target.absolute);
  if (isBinary(buffer)) throw new ToolRefusal(`"${input.path}" looks like a binary file`);
  const lines = splitLines(buffer.toString('utf8'));
  const start = input.startLine ?? 1;
  const end = Math.min(input.endLine ?? lines.length, lines.length);
  if (lines.length > 0 && start > lines.length) {
    throw new ToolRefusal(`startLine ${start} is past the end of "${input.path}" (${lines.length} lines)`);
  }
  let text = '';
  let last = start - 1;
  for (let i = start; i <= end; i++) {
    const line = lines[i - 1]!;
    if (text.length + line.length > READ_OUTPUT_CHARS && i > start) break;
    text += line;
    last = i;
  }
  const range = lines.length === 0 ? 'empty file' : `lines ${start}-${last} of ${lines.length}`;
  const more = last < end ? `\n[output truncated at line ${last}; read on with startLine ${last + 1}]` : '';
  return {
    ok: true,
    output: `${target.relative} (${range}):\n${text}${more}`,
    summary: `read ${target.relative} (${range})`,
  };
}

/** Lines with their terminators kept, so a range is returned byte-exact. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  return lines;
}

function isBinary(buffer: Buffer): boolean {
  return buffer.subarray(0, 8192).includes(0);
}

async function listFilesTool(input: z.infer<typeof listFilesInput>, ctx: ToolContext): Promise<ToolOutcome> {
  const target = await confinePath(ctx.root, input.path);
  const info = await stat(target.absolute);
  if (!info.isDirectory()) return { ok: true, output: target.relative, summary: `listed ${target.relative}` };
  const entries: string[] = [];
  let truncated = false;
  await walk(target.absolute, async (absolute, kind) => {
    if (entries.length >= LIST_LIMIT) {
      truncated = true;
      return false;
    }
    const relative = path.relative(ctx.root, absolute).split(path.sep).join('/');
    entries.push(kind === 'directory' ? `${relative}/` : kind === 'symlink' ? `${relative} (symlink)` : relative);
    return true;
  });
  const note = truncated ? `\n[listing truncated at ${LIST_LIMIT} entries; list a subdirectory]` : '';
  const body = entries.length ? entries.join('\n') : '(empty)';
  return { ok: true, output: `${body}${note}`, summary: `listed ${target.relative} (${entries.length} entries)` };
}

type EntryKind = 'file' | 'directory' | 'symlink';

/** Breadth-first, sorted, without following symlinks; `visit` returns false to stop. */
async function walk(directory: string, visit: (absolute: string, kind: EntryKind) => Promise<boolean>): Promise<void> {
  const queue = [directory];
  while (queue.length) {
    const current = queue.shift()!;
    const children = (await readdir(current, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const child of children) {
      if (child.isDirectory() && SKIPPED_DIRECTORIES.has(child.name)) continue;
      const absolute = path.join(current, child.name);
      const kind: EntryKind = child.isSymbolicLink() ? 'symlink' : child.isDirectory() ? 'directory' : 'file';
      if (!(await visit(absolute, kind))) return;
      if (kind === 'directory') queue.push(absolute);
    }
  }
}

// A model-supplied regex can backtrack catastrophically; matching runs in a vm context whose timeout
// interrupts it, so a bad pattern costs at most the budget instead of hanging the worker.
const regexContext = vm.createContext({});
const matchLines = new vm.Script(
  `(function () { const found = []; for (let i = 0; i < lines.length && found.length < limit; i++) {
     if (re.test(lines[i])) found.push(i); } return found; })()`,
);

async function searchFilesTool(input: z.infer<typeof searchFilesInput>, ctx: ToolContext): Promise<ToolOutcome> {
  const target = await confinePath(ctx.root, input.path);
  let regex: RegExp | null = null;
  if (input.regex) {
    try {
      regex = new RegExp(input.pattern);
    } catch (error) {
      throw new ToolRefusal(`the pattern is not a valid regular expression: ${(error as Error).message}`);
    }
  }
  const files: string[] = [];
  const info = await stat(target.absolute);
  if (info.isDirectory()) {
    await walk(target.absolute, async (absolute, kind) => {
      if (kind === 'file') files.push(absolute);
      return true;
    });
  } else {
    files.push(target.absolute);
  }
  const deadline = Date.now() + SEARCH_REGEX_BUDGET_MS;
  const matches: string[] = [];
  for (const file of files) {
    if (matches.length >= SEARCH_MATCH_LIMIT) break;
    const fileInfo = await lstat(file);
    if (!fileInfo.isFile() || fileInfo.size > SEARCH_FILE_SIZE_LIMIT) continue;
    const buffer = await readFile(file);
    if (isBinary(buffer)) continue;
    const lines = buffer.toString('utf8').split('\n');
    const limit = SEARCH_MATCH_LIMIT - matches.length;
    let found: number[];
    if (regex) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new ToolRefusal('the regular expression search ran out of time; use a simpler pattern');
      Object.assign(regexContext, { re: regex, lines, limit });
      try {
        found = matchLines.runInContext(regexContext, { timeout: remaining }) as number[];
      } catch {
        throw new ToolRefusal('the regular expression search ran out of time; use a simpler pattern');
      } finally {
        Object.assign(regexContext, { re: null, lines: null });
      }
    } else {
      found = [];
      for (let i = 0; i < lines.length && found.length < limit; i++)
        if (lines[i]!.includes(input.pattern)) found.push(i);
    }
    const relative = path.relative(ctx.root, file).split(path.sep).join('/');
    for (const index of found) {
      const line = lines[index]!.replace(/\r$/, '');
      const shown = line.length > SEARCH_LINE_CHARS ? `${line.slice(0, SEARCH_LINE_CHARS)}…` : line;
      matches.push(`${relative}:${index + 1}: ${shown}`);
    }
  }
  const note =
    matches.length >= SEARCH_MATCH_LIMIT
      ? `\n[results truncated at ${SEARCH_MATCH_LIMIT} matches; narrow the search]`
      : '';
  const body = matches.length ? matches.join('\n') : 'no matches';
  return {
    ok: true,
    output: `${body}${note}`,
    summary: `searched ${target.relative} for ${JSON.stringify(input.pattern)} (${matches.length} matches)`,
  };
}

async function writeFileTool(input: z.infer<typeof writeFileInput>, ctx: ToolContext): Promise<ToolOutcome> {
  const target = await writableTarget(ctx.root, input.path);
  const bytes = Buffer.byteLength(input.content);
  if (bytes > WRITE_SIZE_LIMIT) throw new ToolRefusal(`the content is ${bytes} bytes, more than write_file accepts`);
  await mkdir(path.dirname(target.absolute), { recursive: true });
  await writeNoFollow(target.absolute, input.content);
  const verb = target.exists ? 'overwrote' : 'created';
  return {
    ok: true,
    output: `${verb} ${target.relative} (${bytes} bytes)`,
    summary: `${verb} ${target.relative} (${bytes} bytes)`,
  };
}

async function replaceInFileTool(input: z.infer<typeof replaceInFileInput>, ctx: ToolContext): Promise<ToolOutcome> {
  const target = await writableTarget(ctx.root, input.path);
  if (!target.exists) throw new ToolRefusal(`"${input.path}" does not exist; use write_file to create it`);
  const info = await stat(target.absolute);
  if (info.size > READ_SIZE_LIMIT) throw new ToolRefusal(`"${input.path}" is too large to edit with replace_in_file`);
  const text = await readFile(target.absolute, 'utf8');
  const first = text.indexOf(input.old);
  if (first === -1) {
    throw new ToolRefusal(
      `the old text was not found in "${input.path}"; read the file and copy the text exactly, whitespace included`,
    );
  }
  let count = 1;
  for (
    let at = text.indexOf(input.old, first + input.old.length);
    at !== -1;
    at = text.indexOf(input.old, at + input.old.length)
  ) {
    count++;
  }
  if (count > 1)
    throw new ToolRefusal(
      `the old text occurs ${count} times in "${input.path}"; include more surrounding text so it is unique`,
    );
  const updated = text.slice(0, first) + input.new + text.slice(first + input.old.length);
  if (Buffer.byteLength(updated) > WRITE_SIZE_LIMIT)
    throw new ToolRefusal('the edited file would be larger than the workspace tools accept');
  await writeNoFollow(target.absolute, updated);
  const line = text.slice(0, first).split('\n').length;
  return {
    ok: true,
    output: `replaced 1 occurrence in ${target.relative} at line ${line}`,
    summary: `edited ${target.relative} (line ${line})`,
  };
}

async function writableTarget(root: string, requested: string): Promise<ConfinedPath> {
  const target = await confinePath(root, requested);
  refuseGitInternals(target, requested);
  if (target.relative === '.') throw new ToolRefusal('the workspace root is a directory, not a file');
  return target;
}

// `absolute` is already resolved; O_NOFOLLOW refuses a symlink swapped in since the check.
async function writeNoFollow(absolute: string, content: string): Promise<void> {
  const handle = await open(
    absolute,
    constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
    0o644,
  );
  try {
    await handle.writeFile(content, 'utf8');
  } finally {
    await handle.close();
  }
}

async function runCommandTool(input: z.infer<typeof runCommandInput>, ctx: ToolContext): Promise<ToolOutcome> {
  const shown = input.argv.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : JSON.stringify(arg))).join(' ');
  if (input.argv.some((arg) => arg.includes('\0'))) throw new ToolRefusal('an argument contains a NUL byte');
  const allowed = ctx.allowedCommands.some(
    (prefix) =>
      prefix.length > 0 && prefix.length <= input.argv.length && prefix.every((part, i) => input.argv[i] === part),
  );
  if (!allowed) {
    const list = ctx.allowedCommands.length
      ? ctx.allowedCommands.map((prefix) => JSON.stringify(prefix)).join(', ')
      : 'none';
    throw new ToolRefusal(`command "${shown}" is not allowed; allowed argv prefixes: ${list}`);
  }
  const result = await runCommand({
    argv: input.argv,
    cwd: ctx.root,
    workspaceRoot: ctx.root,
    timeoutMs: ctx.commandTimeoutMs,
    sandbox: { sandbox: ctx.sandbox, policy: { workDir: ctx.root, readOnlyInWorkDir: ['.git'], egress: null } },
    env: childEnvironment(),
    outputCapBytes: COMMAND_OUTPUT_CAP,
    heartbeat: ctx.heartbeat,
    signal: ctx.signal,
    confinePathArguments: true,
  });
  ctx.signal?.throwIfAborted();
  if (result.spawnError !== null) {
    const reason = result.spawnError.startsWith('refused: ')
      ? result.spawnError
      : `could not start: ${result.spawnError}`;
    return failure(`${shown}: ${reason}`, `run ${shown}: ${reason}`);
  }
  const status =
    result.timeoutStatus === 'TIMED_OUT'
      ? `timed out after ${ctx.commandTimeoutMs} ms (killed)`
      : result.exitCode !== null
        ? `exit code ${result.exitCode}`
        : `killed by ${result.signal ?? 'a signal'}`;
  const ok = result.timeoutStatus === 'COMPLETED' && result.exitCode === 0;
  const output = [`$ ${shown}`, status, '--- stdout ---', result.stdout, '--- stderr ---', result.stderr].join('\n');
  return { ok, output, summary: `ran ${shown}: ${status}` };
}
