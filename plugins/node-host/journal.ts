/**
 * Each command runs at most once per idempotencyKey, even across a crash of the node host.
 * Before a command starts, a `start` line with its key is appended to
 * `<stateDir>/node/invokes.jsonl` and flushed to the disk; when it ends, a `done` line with
 * its outcome. A key seen again gets the recorded outcome — or, when only `start` is on file
 * (the node host died while it ran), an error saying so: whether it finished is unknown, and
 * running it again could do twice what should happen once.
 *
 * The file is compacted on open: entries older than a day are dropped (the gateway keeps a
 * key for minutes), and at most MAX_ENTRIES are kept.
 */
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../sdk/index.js';

export interface InvokeOutcome {
  ok: boolean;
  payloadJSON?: string;
  error?: { code: string; message: string };
}

interface Entry {
  key: string;
  command: string;
  startedAt: number;
  outcome?: InvokeOutcome;
}

export type Claim =
  | { state: 'new' }
  | { state: 'done'; outcome: InvokeOutcome }
  | { state: 'interrupted'; command: string; startedAt: number }
  | { state: 'running' };

const KEEP_MS = 24 * 60 * 60 * 1000;
const MAX_ENTRIES = 10_000;

export class InvokeJournal {
  private readonly file: string;
  private readonly entries = new Map<string, Entry>();
  /** Keys started by this process and not finished yet. */
  private readonly live = new Set<string>();
  private fd: number;

  constructor(dir: string, now: number = Date.now()) {
    this.file = join(dir, 'invokes.jsonl');
    let text = '';
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      // First run.
    }
    for (const line of text.split('\n')) {
      if (!line) continue;
      let record: { t?: string; key?: string; command?: string; at?: number; outcome?: InvokeOutcome };
      try {
        record = JSON.parse(line);
      } catch {
        continue; // a line cut short by a crash
      }
      if (typeof record.key !== 'string') continue;
      if (record.t === 'start')
        this.entries.set(record.key, { key: record.key, command: String(record.command), startedAt: record.at ?? 0 });
      else if (record.t === 'done' && record.outcome) {
        const entry = this.entries.get(record.key);
        if (entry) entry.outcome = record.outcome;
      }
    }
    const kept = [...this.entries.values()].filter((entry) => now - entry.startedAt < KEEP_MS).slice(-MAX_ENTRIES);
    this.entries.clear();
    for (const entry of kept) this.entries.set(entry.key, entry);
    writeFileAtomic(this.file, kept.map((entry) => this.lines(entry)).join(''));
    this.fd = openSync(this.file, 'a', 0o600);
  }

  /**
   * Record `key` as started (on the disk before this returns) — or say what happened to it
   * before. Only `new` means the caller may run the command.
   */
  claim(key: string, command: string): Claim {
    const entry = this.entries.get(key);
    if (entry?.outcome) return { state: 'done', outcome: entry.outcome };
    if (entry && this.live.has(key)) return { state: 'running' };
    if (entry) return { state: 'interrupted', command: entry.command, startedAt: entry.startedAt };
    const started: Entry = { key, command, startedAt: Date.now() };
    this.append({ t: 'start', key, command, at: started.startedAt });
    this.entries.set(key, started);
    this.live.add(key);
    return { state: 'new' };
  }

  finish(key: string, outcome: InvokeOutcome): void {
    const entry = this.entries.get(key);
    this.live.delete(key);
    if (!entry) return;
    entry.outcome = outcome;
    this.append({ t: 'done', key, outcome });
  }

  close(): void {
    closeSync(this.fd);
  }

  private lines(entry: Entry): string {
    const start = `${JSON.stringify({ t: 'start', key: entry.key, command: entry.command, at: entry.startedAt })}\n`;
    return entry.outcome ? `${start}${JSON.stringify({ t: 'done', key: entry.key, outcome: entry.outcome })}\n` : start;
  }

  private append(record: object): void {
    writeSync(this.fd, `${JSON.stringify(record)}\n`);
    fsyncSync(this.fd);
  }
}
