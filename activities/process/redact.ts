// Secret redaction for stored command output: what a gate or agent prints is kept as evidence and
// served by the API, so credentials it happens to print must not be stored. Patterns are deliberately
// conservative about structure (known token shapes, key=value assignments, URL credentials, PEM
// blocks) and exact about the service's own secrets, which are matched literally.

const MARK = '[REDACTED]';

const PATTERNS: Array<[RegExp, string]> = [
  // PEM private keys, whole block.
  [/-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----/g, `-----BEGIN $1PRIVATE KEY-----${MARK}-----END $1PRIVATE KEY-----`],
  // Credentials in URLs: scheme://user:password@host → keep the user, drop the password.
  [/\b([a-z][a-z0-9+.-]*:\/\/)([^\s/:@]*):([^\s/@]+)@/gi, `$1$2:${MARK}@`],
  // Authorization headers.
  [/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/g, `$1 ${MARK}`],
  // Well-known token shapes.
  [/\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g, MARK],
  [/\bgh[pousr]_[A-Za-z0-9]{30,}\b/g, MARK],
  [/\bgithub_pat_[A-Za-z0-9_]{30,}\b/g, MARK],
  [/\bglpat-[A-Za-z0-9_-]{20,}\b/g, MARK],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, MARK],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g, MARK],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, MARK],
  [/\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, MARK],
  // Assignments whose name says secret: PASSWORD=..., "api_key": "...", token: ... — but not code
  // such as `token = nextToken()`.
  [
    /\b([A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret)[A-Za-z0-9_.-]*)(["']?\s*[:=]\s*["']?)([^\s"',;()]{4,})(?![\w(])/gi,
    `$1$2${MARK}`,
  ],
];

/**
 * Returns `text` with secrets replaced by [REDACTED]. `knownSecrets` are values that must never
 * appear (the service's own keys and passwords); they are replaced wherever they occur.
 */
export function redactSecrets(text: string, knownSecrets: readonly string[] = []): string {
  let out = text;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  for (const secret of knownSecrets) {
    if (secret.length >= 8) out = out.split(secret).join(MARK);
  }
  return out;
}
