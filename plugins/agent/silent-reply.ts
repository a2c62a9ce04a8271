import { isSilentReplyText, NO_REPLY } from '../../sdk/agent/index.js';

/**
 * Streamed assistant text (`{ delta }`, `{ messageEnd }`, `{ reset }` on the agent stream)
 * with the silent token kept out: while one model message could still turn out to be
 * NO_REPLY ("N", "NO_", "no_rep", "NO_REPLY\n"), its text is held back; once it cannot,
 * what was held goes out. A message that ends as NO_REPLY never reaches anyone.
 */
export class SilentReplyFilter {
  private held = '';
  private decided = false;

  /** The events to pass on in place of `data` (none while a possible token is held). */
  filter(data: Record<string, unknown>): Array<Record<string, unknown>> {
    if (data.reset) {
      this.held = '';
      this.decided = false;
      return [data];
    }
    const out: Array<Record<string, unknown>> = [];
    if (typeof data.delta === 'string') {
      const text = this.push(data.delta);
      if (text) out.push({ ...data, delta: text });
    } else if (!data.messageEnd) out.push(data);
    if (data.messageEnd) {
      const rest = this.end();
      if (rest) out.push({ delta: rest });
      out.push(data);
    }
    return out;
  }

  private push(delta: string): string {
    if (this.decided) return delta;
    this.held += delta;
    if (couldBecomeSilent(this.held)) return '';
    this.decided = true;
    const text = this.held;
    this.held = '';
    return text;
  }

  private end(): string {
    const held = this.held;
    this.held = '';
    this.decided = false;
    return isSilentReplyText(held) ? '' : held;
  }
}

function couldBecomeSilent(text: string): boolean {
  const start = text.trimStart().toUpperCase();
  const core = start.trimEnd();
  // Whitespace may follow the whole token, never a part of it ("NO thanks").
  return core === start ? NO_REPLY.startsWith(core) : core === NO_REPLY;
}
