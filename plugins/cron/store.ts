/**
 * Where cron keeps things: `jobs.json` (`{version: 1, jobs}`, rewritten atomically —
 * temp file, fsync, rename — with the version before each edit kept as jobs.json.bak; the
 * run journal's frequent writes keep none) and one append-only JSONL run history per job
 * under `runs/`, pruned to its last lines when it outgrows its byte limit. Files are 0600
 * in 0700 directories. A jobs.json that cannot be read is moved aside (`setAside`) for the
 * service to start again from the backup.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, chmodSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { keepCorruptCopy, writeFileAtomic } from '../../sdk/index.js';
import type { CronJob, CronStoreFile, RunLogEntry } from './types.js';

const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;

export function defaultStorePath(stateDir: string): string {
  return join(stateDir, 'cron', 'jobs.json');
}

/** A job id becomes a file name: nothing that could leave the runs directory. */
export function assertSafeJobId(id: string): void {
  if (!id || /[/\\\0]/.test(id) || id === '.' || id === '..') throw new Error(`invalid job id "${id}"`);
}

/** jobs.json is there but holds no jobs the store can use. */
export class CronStoreUnreadableError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`cron store ${path} ${reason}`);
    this.name = 'CronStoreUnreadableError';
  }
}

function jobsOf(text: string, path: string): CronJob[] {
  let parsed: Partial<CronStoreFile>;
  try {
    parsed = JSON.parse(text) as Partial<CronStoreFile>;
  } catch (error) {
    throw new CronStoreUnreadableError(path, `is not valid JSON (${(error as Error).message})`);
  }
  if (!parsed || !Array.isArray(parsed.jobs)) throw new CronStoreUnreadableError(path, 'has no "jobs" array');
  return parsed.jobs;
}

export class CronStore {
  /** mtime and size of what we last wrote or read: anything else is an outside edit. */
  private seen?: { mtimeMs: number; size: number };

  constructor(readonly path: string) {}

  get runsDir(): string {
    return join(dirname(this.path), 'runs');
  }

  load(): CronJob[] {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.seen = undefined;
        return [];
      }
      throw error;
    }
    this.remember();
    return jobsOf(text, this.path);
  }

  /**
   * Moves an unreadable jobs.json aside, to `jobs.json.corrupt-<ms>` (0600, never over an
   * earlier copy), and reads the backup of the version before the last edit, when there is
   * a readable one. Moved, not left: the next save would make the unreadable file the backup.
   */
  setAside(): { kept: string; backup?: { path: string; savedAtMs: number; jobs: CronJob[] } } {
    const kept = keepCorruptCopy(this.path);
    rmSync(this.path, { force: true });
    this.seen = undefined;
    const path = `${this.path}.bak`;
    try {
      const jobs = jobsOf(readFileSync(path, 'utf8'), path);
      return { kept, backup: { path, savedAtMs: statSync(path).mtimeMs, jobs } };
    } catch {
      // No backup (the store was never edited twice), or it is damaged too.
      return { kept };
    }
  }

  /**
   * `flush: false` for the run journal (claims and ends, many a second with busy jobs): the
   * rename already survives a killed process; only a power cut could lose it, and then the
   * occurrence runs again rather than never. Edits a caller was told about are flushed.
   */
  save(jobs: readonly CronJob[], flush = true): void {
    const file: CronStoreFile = { version: 1, jobs: [...jobs] };
    writeFileAtomic(this.path, `${JSON.stringify(file, null, 2)}\n`, { backup: flush, fsync: flush });
    this.remember();
  }

  /** Someone else wrote jobs.json since we last read or wrote it. */
  changedOnDisk(): boolean {
    try {
      const stat = statSync(this.path);
      return !this.seen || stat.mtimeMs !== this.seen.mtimeMs || stat.size !== this.seen.size;
    } catch {
      return this.seen !== undefined;
    }
  }

  private remember(): void {
    try {
      const stat = statSync(this.path);
      this.seen = { mtimeMs: stat.mtimeMs, size: stat.size };
    } catch {
      this.seen = undefined;
    }
  }
}

/** Per-job run history: appended one line per finished run, pruned past maxBytes to keepLines. */
export class RunLog {
  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
    private readonly keepLines: number,
  ) {}

  file(jobId: string): string {
    assertSafeJobId(jobId);
    return join(this.dir, `${jobId}.jsonl`);
  }

  append(entry: RunLogEntry): void {
    const file = this.file(entry.jobId);
    if (!existsSync(this.dir)) mkdirSync(this.dir, { recursive: true, mode: PRIVATE_DIR });
    appendFileSync(file, `${JSON.stringify(entry)}\n`, { mode: PRIVATE_FILE });
    const size = statSync(file).size;
    if (size > this.maxBytes) {
      const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
      writeFileAtomic(file, `${lines.slice(-this.keepLines).join('\n')}\n`, { fsync: false });
    }
    chmodSync(file, PRIVATE_FILE);
  }

  /** Jobs with a run history, removed ones included (their history stays). */
  jobIds(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((name) => name.endsWith('.jsonl') && name.length > '.jsonl'.length)
        .map((name) => name.slice(0, -'.jsonl'.length));
    } catch {
      return [];
    }
  }

  /** Newest first; torn or foreign lines are skipped. */
  read(jobId: string, limit = 50): RunLogEntry[] {
    let text: string;
    try {
      text = readFileSync(this.file(jobId), 'utf8');
    } catch {
      return [];
    }
    const entries: RunLogEntry[] = [];
    const lines = text.split('\n');
    for (let index = lines.length - 1; index >= 0 && entries.length < limit; index--) {
      try {
        const entry = JSON.parse(lines[index]!) as RunLogEntry;
        if (entry && entry.action === 'finished' && entry.jobId === jobId) entries.push(entry);
      } catch {
        // A torn last line after a crash, or an empty one.
      }
    }
    return entries;
  }
}
