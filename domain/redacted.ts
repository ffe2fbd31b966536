/** What every sanitiser writes in place of a secret. */
export const REDACTED = '[REDACTED]';
