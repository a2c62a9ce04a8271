/**
 * One WhatsApp account's credentials folder, `<stateDir>/credentials/whatsapp/<accountId>`
 * (or the account's `authDir`): Baileys' multi-file auth state, written the way every
 * file under the state dir is — owner-only (folder 0700, files 0600), each write to a
 * temp file, fsync'd and renamed, so a crash mid-write leaves the old file whole rather
 * than torn creds that would force a new QR login. Writes to one file are applied in the
 * order they were asked for.
 *
 * Also keeps the "logged out" marker: WhatsApp revoked the device, the creds are dead, and
 * the account must not reconnect until someone runs `claw channels login` again.
 */
import { chmod, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_DIR_MODE, writeFileAtomicAsync } from '../../sdk/index.js';

export const CREDS_FILE = 'creds.json';
const LOGGED_OUT_FILE = 'logged-out.json';

export interface LoggedOutMarker {
  at: number;
  reason: string;
}

/** Baileys names key files after ids that may hold "/" and ":"; same mapping as its own store. */
export const authFileName = (name: string) => name.replace(/\//g, '__').replace(/:/g, '-');

export class AuthStore {
  private readonly queues = new Map<string, Promise<void>>();

  constructor(readonly dir: string) {}

  /** Create the folder owner-only (and tighten one that exists). */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await chmod(this.dir, PRIVATE_DIR_MODE);
  }

  async read(name: string): Promise<string | undefined> {
    await this.queues.get(authFileName(name));
    try {
      return await readFile(join(this.dir, authFileName(name)), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Atomic, 0600, in order per file. */
  write(name: string, data: string): Promise<void> {
    return this.enqueue(name, () => writeFileAtomicAsync(join(this.dir, authFileName(name)), data));
  }

  remove(name: string): Promise<void> {
    return this.enqueue(name, () => rm(join(this.dir, authFileName(name)), { force: true }));
  }

  private enqueue(name: string, task: () => Promise<void>): Promise<void> {
    const file = authFileName(name);
    const next = (this.queues.get(file) ?? Promise.resolve()).catch(() => {}).then(task);
    this.queues.set(file, next);
    void next.finally(() => this.queues.get(file) === next && this.queues.delete(file)).catch(() => {});
    return next;
  }

  /** Linked: creds name the device WhatsApp registered (`me`). */
  async linked(): Promise<boolean> {
    try {
      const creds = JSON.parse((await this.read(CREDS_FILE)) ?? 'null') as { me?: { id?: string } } | null;
      return typeof creds?.me?.id === 'string';
    } catch {
      return false;
    }
  }

  async loggedOut(): Promise<LoggedOutMarker | undefined> {
    try {
      return JSON.parse((await this.read(LOGGED_OUT_FILE)) ?? 'null') ?? undefined;
    } catch {
      return undefined;
    }
  }

  /** The device was unlinked: drop the dead creds, keep a marker so no restart reconnects. */
  async markLoggedOut(reason: string): Promise<void> {
    await this.clear();
    await this.open();
    await this.write(LOGGED_OUT_FILE, JSON.stringify({ at: Date.now(), reason } satisfies LoggedOutMarker));
  }

  /** Resolves once every write asked for so far is on disk. */
  async flush(): Promise<void> {
    await Promise.all([...this.queues.values()].map((pending) => pending.catch(() => {})));
  }

  /** Remove every file of the account (logout, or a fresh login). */
  async clear(): Promise<void> {
    await this.flush();
    await rm(this.dir, { recursive: true, force: true });
  }

  async files(): Promise<string[]> {
    try {
      return await readdir(this.dir);
    } catch {
      return [];
    }
  }
}
