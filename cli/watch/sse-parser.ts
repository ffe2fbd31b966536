// Server-sent events as the HTML standard parses them
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation): text in
// chunks that may split a line anywhere; lines end in CRLF, LF or CR; a blank line dispatches the event.

export interface SseMessage {
  /** `message` unless the event named its type. */
  event: string;
  data: string;
  /** The last event id the stream has set, this event's own or an earlier one's; '' for none. */
  lastEventId: string;
}

export class SseParser {
  private buffer = '';
  /** A chunk ended in CR: an LF starting the next one belongs to the same line end. */
  private pendingCr = false;
  private data: string[] = [];
  private event = '';
  private lastEventId = '';
  /** The reconnection time the server asked for (`retry`), if any. */
  retryMs: number | null = null;

  /** The events `chunk` completes. */
  push(chunk: string): SseMessage[] {
    let text = chunk;
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = text.endsWith('\r');
    this.buffer += text;
    const lines = this.buffer.split(/\r\n|\r|\n/);
    // The last piece has no line end yet (an empty string when the chunk ended with one).
    this.buffer = lines.pop() ?? '';
    const messages: SseMessage[] = [];
    for (const line of lines) {
      const message = this.line(line);
      if (message) messages.push(message);
    }
    return messages;
  }

  private line(line: string): SseMessage | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.lastEventId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    return null;
  }

  private dispatch(): SseMessage | null {
    const data = this.data;
    const event = this.event;
    this.data = [];
    this.event = '';
    if (!data.length) return null;
    return { event: event || 'message', data: data.join('\n'), lastEventId: this.lastEventId };
  }
}
