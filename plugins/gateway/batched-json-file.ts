/**
 * A small owner-only JSON document kept in memory and written in batches: changes bump a
 * version, `flush()` writes everything changed so far in one atomic write (a burst of changes
 * costs one write), and callers that must not answer before the change is on disk await it.
 * The pairing store and the setup-code store are both one of these.
 */
import { readFileSync } from 'node:fs';
import { writeFileAtomicAsync } from '../../sdk/index.js';

export abstract class BatchedJsonFile<T extends object> {
  protected data: T;
  /** Bumped by every change; `written` is the version on disk. */
  private version = 0;
  private written = 0;
  private writing?: Promise<void>;

  /**
   * `empty`: the document when the file does not exist; `hasShape`: its shape check; `unreadable`:
   * the error for a file that exists but cannot be used (never silently replaced).
   */
  constructor(
    protected readonly file: string,
    private readonly empty: () => T,
    private readonly hasShape: (parsed: T) => boolean,
    private readonly unreadable: (message: string) => Error,
  ) {
    this.data = this.load();
  }

  private load(): T {
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as T;
      if (parsed && typeof parsed === 'object' && this.hasShape(parsed)) return parsed;
      throw new Error('unexpected shape');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return this.empty();
      throw this.unreadable(`${this.file} is unreadable: ${(error as Error).message}`);
    }
  }

  /** Re-read from disk (another process may have written it); unwritten changes are written first. */
  protected async reread(): Promise<void> {
    await this.flush();
    this.data = this.load();
  }

  protected changed(): void {
    this.version++;
  }

  /** True when changes are waiting to be written. */
  get dirty(): boolean {
    return this.written < this.version;
  }

  /** Resolves once every change made before the call is on disk. */
  async flush(): Promise<void> {
    const target = this.version;
    while (this.written < target) {
      this.writing ??= this.writeOnce().finally(() => (this.writing = undefined));
      await this.writing;
    }
  }

  private async writeOnce(): Promise<void> {
    const version = this.version;
    await writeFileAtomicAsync(this.file, `${JSON.stringify(this.data, null, 2)}\n`, { mode: 0o600 });
    this.written = version;
  }
}
