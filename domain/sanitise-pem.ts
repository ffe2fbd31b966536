import { REDACTED } from './redacted';

// PEM private key blocks, found with indexOf rather than a lazy regex: a BEGIN with no END (output cut at
// a cap, or an adversarial run of BEGINs) must cost one pass over the text, not one per BEGIN.

const BEGIN = '-----BEGIN ';
const END = '-----END ';
/** The label after BEGIN/END, bounded so checking one costs the same wherever it appears. */
const PRIVATE_KEY_LABEL = /[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/y;

/**
 * Replaces the body of every private key block with the mark, keeping its BEGIN and END lines. A block
 * with no END is redacted to the end of the text: what follows an unterminated key is the rest of the key.
 */
export function redactPrivateKeyBlocks(text: string): string {
  let out = '';
  let copied = 0;
  let from = 0;
  // The first footer at or after the last search start; null once none is left. Searches only move
  // forward, so the whole scan reads each character a bounded number of times.
  let footer: { start: number; end: number } | null | undefined;
  for (let begin = text.indexOf(BEGIN); begin !== -1; begin = text.indexOf(BEGIN, from)) {
    const bodyStart = labelEnd(text, begin + BEGIN.length);
    if (bodyStart === -1) {
      from = begin + BEGIN.length;
      continue;
    }
    if (footer === undefined || (footer !== null && footer.start < bodyStart)) footer = nextFooter(text, bodyStart);
    out += text.slice(copied, bodyStart) + REDACTED;
    if (footer === null) return out;
    copied = footer.start;
    from = footer.end;
  }
  return out + text.slice(copied);
}

/** Where a private key label starting at `at` ends, or -1 if there is none. */
function labelEnd(text: string, at: number): number {
  PRIVATE_KEY_LABEL.lastIndex = at;
  return PRIVATE_KEY_LABEL.test(text) ? PRIVATE_KEY_LABEL.lastIndex : -1;
}

function nextFooter(text: string, from: number): { start: number; end: number } | null {
  for (let start = text.indexOf(END, from); start !== -1; start = text.indexOf(END, start + END.length)) {
    const end = labelEnd(text, start + END.length);
    if (end !== -1) return { start, end };
  }
  return null;
}
