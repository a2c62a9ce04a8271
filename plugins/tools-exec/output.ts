/**
 * Captured output of one command, bounded: the first part and the latest part are kept and
 * the middle is dropped, because the start shows what ran and the end shows how it went.
 * Positions count every character ever appended, so readers can resume where they stopped
 * even after the middle is gone.
 */

/** The share of the budget kept from the start; the rest follows the end. */
const HEAD_SHARE = 0.3;

export function omissionNote(chars: number): string {
  return `\n[... ${chars} characters omitted ...]\n`;
}

export class OutputBuffer {
  private head = '';
  private tail = '';
  /** Characters received so far. */
  total = 0;
  private readonly headCap: number;
  private readonly tailCap: number;

  constructor(maxChars: number) {
    this.headCap = Math.floor(maxChars * HEAD_SHARE);
    this.tailCap = maxChars - this.headCap;
  }

  append(text: string): void {
    if (text === '') return;
    this.total += text.length;
    let rest = text;
    if (this.head.length < this.headCap) {
      const room = this.headCap - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
    }
    if (rest === '') return;
    this.tail += rest;
    if (this.tail.length > this.tailCap) this.tail = this.tail.slice(this.tail.length - this.tailCap);
  }

  /** Characters dropped from the middle so far. */
  get omitted(): number {
    return this.total - this.head.length - this.tail.length;
  }

  /** Everything kept, with a note where the middle was dropped. */
  text(): string {
    return this.since(0).text;
  }

  /** What was appended from `position` on, as far as it is still kept. */
  since(position: number): { text: string; omitted: number } {
    const tailStart = this.total - this.tail.length;
    if (position >= tailStart) return { text: this.tail.slice(position - tailStart), omitted: 0 };
    const fromHead = position < this.head.length ? this.head.slice(position) : '';
    const omitted = tailStart - Math.max(position, this.head.length);
    return { text: fromHead + (omitted > 0 ? omissionNote(omitted) : '') + this.tail, omitted };
  }
}
