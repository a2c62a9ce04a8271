/**
 * Live reload: one recursive fs.watch per canvas folder while some page listens, and a
 * server-sent event stream per page. Bursts of changes (an editor's save, a tool writing
 * several files) come out as one `reload` event after a short quiet spell.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { ServerResponse } from 'node:http';

const QUIET_MS = 120;
const KEEPALIVE_MS = 25_000;

interface Folder {
  watcher: FSWatcher;
  listeners: Set<ServerResponse>;
  timer?: NodeJS.Timeout;
  changed: Set<string>;
}

export class LiveReload {
  private readonly folders = new Map<string, Folder>();

  /** Hold `res` open as an event stream that says `reload` when a file under `dir` changes. */
  subscribe(dir: string, res: ServerResponse): void {
    let folder = this.folders.get(dir);
    if (!folder) {
      const watcher = watch(dir, { recursive: true }, (_event, name) => this.changed(dir, String(name ?? '')));
      watcher.on('error', () => this.close(dir));
      folder = { watcher, listeners: new Set(), changed: new Set() };
      this.folders.set(dir, folder);
    }
    const listeners = folder.listeners;
    listeners.add(res);
    res.write('retry: 1000\n\nevent: ready\ndata: {}\n\n');
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
    res.on('close', () => {
      clearInterval(keepalive);
      listeners.delete(res);
      if (listeners.size === 0 && this.folders.get(dir)?.listeners === listeners) this.close(dir);
    });
  }

  /** How many pages listen to `dir` (for tests and status). */
  listeners(dir: string): number {
    return this.folders.get(dir)?.listeners.size ?? 0;
  }

  private changed(dir: string, name: string): void {
    const folder = this.folders.get(dir);
    // Editors' swap and temp files are dotfiles, which the host never serves.
    if (!folder || name.split(/[\\/]/).some((part) => part.startsWith('.'))) return;
    folder.changed.add(name.split('\\').join('/'));
    clearTimeout(folder.timer);
    folder.timer = setTimeout(() => {
      const paths = [...folder.changed].sort();
      folder.changed.clear();
      const frame = `event: reload\ndata: ${JSON.stringify({ paths })}\n\n`;
      for (const res of folder.listeners) res.write(frame);
    }, QUIET_MS);
  }

  private close(dir: string): void {
    const folder = this.folders.get(dir);
    if (!folder) return;
    this.folders.delete(dir);
    clearTimeout(folder.timer);
    folder.watcher.close();
    for (const res of folder.listeners) res.end();
  }
}
