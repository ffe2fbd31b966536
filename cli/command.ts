import type { z } from 'zod';
import type { ApiClient } from './api-client';
import type { Io } from './io';

// What a command is: its name, help, options, an input schema, and what it does.

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** Shown in help after the option name, e.g. `--limit N`. */
  value?: string;
  description: string;
}

export interface Context {
  io: Io;
  env: NodeJS.ProcessEnv;
  /** --json: print the API's raw answers (one JSON document per line) instead of text. */
  json: boolean;
  /** The API client; resolving it reads the configuration and needs an API key. */
  api(): ApiClient;
}

export interface Command<T = unknown> {
  name: string;
  summary: string;
  /** Positional arguments, all required, in order (e.g. ['loopId']). */
  positionals: string[];
  /** The usage line after `engineering-loop <name> `. */
  usage: string;
  /** More help: what it prints, exit codes, examples. */
  details?: string;
  options: Record<string, OptionSpec>;
  /** Validates the named positionals and the options (keys as named on the command line). */
  input: z.ZodType<T>;
  /** Runs the command; resolves to the process exit code. */
  run(input: T, ctx: Context): Promise<number>;
}

/** Lets a registry hold commands with different input types. */
export function defineCommand<T>(command: Command<T>): Command<unknown> {
  return command as unknown as Command<unknown>;
}
