import { z } from 'zod';

// zod schemas for command-line values, with messages that say what was expected and what came.

const shown = (input: unknown) => (input === undefined ? 'nothing' : JSON.stringify(input));

export const loopIdArg = z.uuid({
  error: (iss) => `must be a loop id (a UUID like 3f2c9a1e-8d4b-4c1a-9e7f-0a1b2c3d4e5f), got ${shown(iss.input)}`,
});

/** A whole number within [min, max], from a string option; undefined when not given. */
export function intOption(min: number, max: number) {
  const message = (iss: { input?: unknown }) =>
    `must be a whole number from ${min} to ${max}, got ${shown(iss.input === undefined ? undefined : String(iss.input))}`;
  return z
    .string()
    .regex(/^\s*-?\d+\s*$/, { error: message })
    .transform(Number)
    .pipe(z.number().int().min(min, { error: message }).max(max, { error: message }))
    .optional();
}

export function enumArg<const T extends readonly [string, ...string[]]>(values: T, what: string) {
  return z.enum(values, { error: (iss) => `${what} must be one of ${values.join(', ')}, got ${shown(iss.input)}` });
}

/** A non-empty text option (trimmed); undefined when not given. */
export function textOption(max: number) {
  return z
    .string()
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` })
    .optional();
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A duration such as 90s, 30m, 1h or 500ms (a bare number is seconds), in milliseconds; undefined when not given. */
export function durationOption(maxMs: number) {
  return z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return undefined;
      const match = /^\s*(\d+(?:\.\d+)?)(ms|s|m|h)?\s*$/.exec(text);
      const ms = match ? Math.round(Number(match[1]) * DURATION_UNITS[match[2] ?? 's']!) : NaN;
      if (!(ms <= maxMs)) {
        ctx.addIssue({
          code: 'custom',
          message: `must be a duration like 90s, 30m or 1h (at most ${maxMs / 3_600_000}h), got ${shown(text)}`,
        });
        return z.NEVER;
      }
      return ms;
    });
}
