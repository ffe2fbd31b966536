// Errors the CLI reports to the user as one clear message (no stack trace) and an exit code.

/** A failure the user can act on: printed as `error: <message>` (and the hint), exit code 1 unless given. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Wrong arguments: printed with a pointer to the command's --help. */
export class UsageError extends CliError {
  constructor(message: string, command?: string) {
    super(message, `see: engineering-loop ${command ? `${command} ` : ''}--help`);
  }
}
