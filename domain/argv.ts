import { z } from 'zod';

// A command as the service runs it: never through a shell, so an argument is exactly one argv entry.
// Gates, set-up, acceptance-criterion commands and command makers all take this shape.
export const argvSchema = z
  .array(z.string().min(1).max(4096))
  .min(1, 'argv needs at least the program to run')
  .max(256);
