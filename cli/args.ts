import { parseArgs } from 'node:util';
import type { z } from 'zod';
import type { Command, OptionSpec } from './command';
import { UsageError } from './errors';

// Command-line parsing: node's util.parseArgs for the syntax, the command's zod schema for the values.

/** Flags every command takes, before or after the command name. */
export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  json: { type: 'boolean', description: "print the API's raw JSON answers (one document per line) instead of text" },
  help: { type: 'boolean', short: 'h', description: 'show help' },
};

export interface ParsedArgs<T> {
  input: T;
  json: boolean;
  help: boolean;
}

/** Parses `args` (everything but the command name) for `command`; throws UsageError with a clear message. */
export function parseCommandArgs<T>(
  command: Command<T>,
  args: string[],
): ParsedArgs<T> | { help: true; json: boolean } {
  const specs = { ...GLOBAL_OPTIONS, ...command.options };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      options: Object.fromEntries(
        Object.entries(specs).map(([name, spec]) => [
          name,
          { type: spec.type, ...(spec.short ? { short: spec.short } : {}) },
        ]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(parseArgsMessage(error as Error & { code?: string }, command.name), command.name);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const json = values.json === true;
  if (values.help === true) return { help: true, json };

  const { positionals } = parsed;
  if (positionals.length < command.positionals.length) {
    const missing = command.positionals.slice(positionals.length).map((p) => `<${p}>`);
    throw new UsageError(
      `${command.name}: missing ${missing.join(' ')} (usage: engineering-loop ${command.name} ${command.usage})`,
      command.name,
    );
  }
  if (positionals.length > command.positionals.length) {
    const extra = positionals.slice(command.positionals.length).map((p) => JSON.stringify(p));
    throw new UsageError(
      `${command.name}: unexpected argument${extra.length > 1 ? 's' : ''} ${extra.join(' ')} (usage: engineering-loop ${command.name} ${command.usage})`,
      command.name,
    );
  }
  const raw: Record<string, unknown> = {};
  command.positionals.forEach((name, i) => (raw[name] = positionals[i]));
  for (const name of Object.keys(command.options)) raw[name] = values[name];

  const result = command.input.safeParse(raw);
  if (!result.success) throw new UsageError(describeIssues(result.error, command), command.name);
  return { input: result.data, json, help: false };
}

/** `--limit: must be a whole number from 1 to 200 (got "x")`, one per line. */
function describeIssues(error: z.ZodError, command: Command<unknown>): string {
  const lines = error.issues.map((issue) => {
    const key = issue.path[0];
    const label = typeof key !== 'string' ? command.name : command.positionals.includes(key) ? `<${key}>` : `--${key}`;
    return `${label}: ${issue.message}`;
  });
  return lines.length === 1
    ? `${command.name}: ${lines[0]}`
    : `${command.name}:\n${lines.map((l) => `  - ${l}`).join('\n')}`;
}

/** parseArgs' messages are written for programmers; these say what to do. */
function parseArgsMessage(error: Error & { code?: string }, command: string): string {
  const option = /'(-[^']*)'/.exec(error.message)?.[1] ?? '';
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `${command}: unknown option ${option}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const name = option.split(' ')[0];
      if (/does not take an argument/.test(error.message)) return `${command}: option ${name} takes no value`;
      return `${command}: option ${name} needs a value`;
    }
    default:
      return `${command}: ${error.message}`;
  }
}
