// PostgreSQL refuses two kinds of character in text and jsonb (measured on the service's PostgreSQL):
// NUL (U+0000) and UTF-16 surrogates without their pair. Every other code point is stored as sent.

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `text` cannot be stored (naming the character), or null when it can. */
export function unstorableCharacter(text: string): string | null {
  const found = UNSTORABLE.exec(text);
  if (!found) return null;
  const code = `\\u${found[0].charCodeAt(0).toString(16).padStart(4, '0')}`;
  const what = found[0] === '\u0000' ? 'a NUL character' : 'an unpaired surrogate';
  return `contains ${what} (${code}) at position ${found.index}, which cannot be stored`;
}
