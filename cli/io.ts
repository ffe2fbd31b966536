// Where the CLI writes: stdout for answers, stderr for errors and live progress. Injected for tests.

export interface Io {
  /** One line (or block) of output on stdout. */
  out(text: string): void;
  /** One line (or block) on stderr. */
  err(text: string): void;
  /** Raw bytes on stdout without a newline (the live line). */
  write(text: string): void;
  /** Whether stdout is a terminal: then watch draws a spinner on its current line. */
  isTTY: boolean;
}

export function processIo(): Io {
  return {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
    write: (text) => process.stdout.write(text),
    isTTY: process.stdout.isTTY === true,
  };
}
