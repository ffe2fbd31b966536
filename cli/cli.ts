import { ApiClient } from './api-client';
import { parseCommandArgs } from './args';
import type { Command, Context } from './command';
import { COMMANDS } from './commands';
import { requireApiKey, resolveConfig } from './config';
import { CliError, UsageError } from './errors';
import { commandHelp, mainHelp } from './help';
import type { Io } from './io';

// Argument dispatch: finds the command, parses its arguments, runs it, and turns failures into a
// message on stderr and an exit code (no stack traces for anything the user can fix).

export const DEBUG_VARIABLE = 'ENGINEERING_LOOP_DEBUG';

export async function runCli(argv: string[], io: Io, env: NodeJS.ProcessEnv): Promise<number> {
  try {
    return await dispatch(argv, io, env);
  } catch (error) {
    return report(error, io, env);
  }
}

async function dispatch(argv: string[], io: Io, env: NodeJS.ProcessEnv): Promise<number> {
  // The command is the first word that is not an option; global flags may come before it.
  const at = argv.findIndex((a) => !a.startsWith('-'));
  const name = at === -1 ? undefined : argv[at];
  const rest = at === -1 ? argv : [...argv.slice(0, at), ...argv.slice(at + 1)];

  if (name === undefined) {
    if (rest.some((a) => a === '--help' || a === '-h')) {
      io.out(mainHelp(COMMANDS));
      return 0;
    }
    io.err(mainHelp(COMMANDS));
    return 1;
  }
  if (name === 'help') {
    const topic = rest.find((a) => !a.startsWith('-'));
    const command = topic === undefined ? undefined : findCommand(topic);
    io.out(command ? commandHelp(command) : mainHelp(COMMANDS));
    return 0;
  }
  const command = findCommand(name);
  const parsed = parseCommandArgs(command, rest);
  if (parsed.help) {
    io.out(commandHelp(command));
    return 0;
  }
  let api: ApiClient | undefined;
  const ctx: Context = {
    io,
    env,
    json: parsed.json,
    api: () => {
      if (!api) {
        const config = resolveConfig(env);
        api = new ApiClient(config.url, requireApiKey(config));
      }
      return api;
    },
  };
  return await command.run(parsed.input, ctx);
}

function findCommand(name: string): Command<unknown> {
  const command = COMMANDS.find((c) => c.name === name);
  if (!command)
    throw new UsageError(
      `unknown command ${JSON.stringify(name)}; commands: ${COMMANDS.map((c) => c.name).join(', ')}`,
    );
  return command;
}

function report(error: unknown, io: Io, env: NodeJS.ProcessEnv): number {
  if (error instanceof CliError) {
    io.err(`error: ${error.message}`);
    if (error.hint) io.err(`hint: ${error.hint}`);
    return error.exitCode;
  }
  // A bug, not a user error: say so, and show the stack only when asked.
  const message = error instanceof Error ? error.message : String(error);
  io.err(`error: unexpected failure: ${message}`);
  if (env[DEBUG_VARIABLE]) io.err(error instanceof Error && error.stack ? error.stack : String(error));
  else io.err(`hint: set ${DEBUG_VARIABLE}=1 for the stack trace`);
  return 1;
}
