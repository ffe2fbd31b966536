#!/usr/bin/env node
import { runCli } from './cli';
import { processIo } from './io';

// The `engineering-loop` command (package.json "bin": dist/cli/main.js).

// Piped into `head` and the like: stop quietly when the reader goes away.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

void runCli(process.argv.slice(2), processIo(), process.env).then((code) => {
  // exitCode, not exit(): let stdout drain when it is a pipe.
  process.exitCode = code;
});
