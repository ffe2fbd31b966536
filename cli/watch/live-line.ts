import type { Io } from '../io';

// On a terminal, `watch` keeps a spinner and the loop's current state on its last line; printed lines
// and notices (on stderr) go above it. Elsewhere (pipes, files, CI logs) it prints plain lines only.

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const CLEAR_LINE = '\r\x1b[2K';

export class LiveLine {
  private text = '';
  private frame = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly io: Io) {}

  /** Prints a line above the live line. */
  print(line: string): void {
    if (!this.io.isTTY) return this.io.out(line);
    this.io.write(CLEAR_LINE);
    this.io.out(line);
    this.draw();
  }

  /** A line on stderr (a reconnection, say), never inside the live line. */
  notice(line: string): void {
    if (this.io.isTTY && this.text) this.io.write(CLEAR_LINE);
    this.io.err(line);
    this.draw();
  }

  /** Sets the live line's text (terminals only) and starts the spinner. */
  status(text: string): void {
    if (!this.io.isTTY) return;
    this.text = text;
    if (!this.timer) {
      this.timer = setInterval(() => {
        this.frame = (this.frame + 1) % FRAMES.length;
        this.draw();
      }, 100);
      this.timer.unref();
    }
    this.draw();
  }

  /** Stops the spinner and clears its line. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.io.isTTY && this.text) this.io.write(CLEAR_LINE);
    this.text = '';
  }

  private draw(): void {
    if (this.text) this.io.write(`${CLEAR_LINE}${FRAMES[this.frame]} ${this.text}`);
  }
}
