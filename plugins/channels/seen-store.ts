/**
 * The inbound messages the pipeline has handed to an agent, remembered across restarts.
 *
 * Platforms redeliver: WhatsApp replays messages whose receipt it never saw, Discord replays
 * dispatches on a fresh session, a webhook sender retries. Within one process the pipeline's
 * in-memory map catches that; after a restart only this file does. A key is written only
 * once the message is in the intake journal, so a message the previous process never
 * accepted is still taken when it comes again (nothing acknowledged is lost, nothing is
 * answered twice).
 *
 * One line per message, `<hash> <epoch ms>`, appended (0600 file in a 0700 dir). Keys are
 * hashed: the file says nothing about who wrote to whom. A torn last line is skipped. When
 * the file holds many expired lines it is rewritten whole (temp + rename).
 */
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { ensurePrivateFile, writeFileAtomic } from '../../sdk/index.js';

const LINE = /^([0-9a-f]{32}) (\d{1,16})$/;

export function seenKeyHash(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 32);
}

export class SeenStore {
  private appended = 0;
  /** The file ends in a torn line (a crash mid-append): the next line starts fresh. */
  private torn = false;

  constructor(
    private readonly file: string,
    private readonly windowMs: number,
  ) {}

  /** The keys recorded within the window, oldest first, with when they were recorded. */
  load(now: number): Map<string, number> {
    const seen = new Map<string, number>();
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return seen;
      throw error;
    }
    const cutoff = now - this.windowMs;
    let lines = 0;
    for (const line of text.split('\n')) {
      const match = LINE.exec(line);
      if (!match) continue;
      lines++;
      const at = Number(match[2]);
      if (at >= cutoff) seen.set(match[1]!, at);
    }
    this.appended = lines;
    this.torn = text.length > 0 && !text.endsWith('\n');
    return seen;
  }

  /** Append one accepted message; compact when most lines have expired. */
  record(hash: string, at: number, live: Map<string, number>): void {
    ensurePrivateFile(this.file);
    appendFileSync(this.file, `${this.torn ? '\n' : ''}${hash} ${at}\n`);
    this.torn = false;
    this.appended++;
    if (this.appended > 1000 && this.appended > live.size * 4) this.compact(live);
  }

  private compact(live: Map<string, number>): void {
    const lines = [...live].map(([hash, at]) => `${hash} ${at}\n`).join('');
    writeFileAtomic(this.file, lines, { mode: 0o600 });
    this.appended = live.size;
  }
}
