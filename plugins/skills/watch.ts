/**
 * The skills watcher (`skills.load.watch`): one recursive fs.watch per skill root, or on its
 * parent while the root does not exist yet. A SKILL.md change or a folder appearing or
 * going away, once quiet for `watchDebounceMs`, bumps `generation`; the catalog reads the
 * skills again on the next turn. Edits to other files (scripts, references) are ignored.
 * When the OS refuses a watch (inotify limits), `broken` says why and the catalog falls
 * back to reading the skills on every turn.
 */
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

export class SkillWatcher {
  generation = 0;
  broken?: string;
  private readonly watchers = new Map<string, FSWatcher>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly debounceMs: () => number,
    private readonly onChange: () => void,
  ) {}

  /** Watch these roots (cheap when they are watched already). */
  ensure(roots: readonly string[]): void {
    if (this.broken) return;
    for (const root of roots) {
      if (this.watchers.has(root)) continue;
      if (existsSync(root)) {
        this.watchers.get(`parent:${root}`)?.close();
        this.watchers.delete(`parent:${root}`);
        // A root watched from now on: what was written into it before the watch began would
        // go unseen, so count it as a change (the caller reads the skills right after).
        if (
          this.arm(root, root, true, (event, name) => event === 'rename' || name === null || name.endsWith('SKILL.md'))
        )
          this.generation++;
      } else if (!this.watchers.has(`parent:${root}`) && existsSync(dirname(root))) {
        this.arm(`parent:${root}`, dirname(root), false, (_event, name) => name === null || name === basename(root));
      }
    }
  }

  private arm(
    key: string,
    dir: string,
    recursive: boolean,
    relevant: (event: string, name: string | null) => boolean,
  ): boolean {
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { recursive, persistent: false }, (event, name) => {
        if (relevant(event, name === null ? null : String(name))) this.changed();
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return false; // gone between the check and the watch: armed again next time
      this.broken = `cannot watch ${dir}: ${code ?? (error as Error).message}`;
      this.close();
      return false;
    }
    watcher.on('error', () => {
      // The folder went away under the watch: forget it, so the next turn arms it (or its parent) again.
      watcher.close();
      this.watchers.delete(key);
      this.changed();
    });
    this.watchers.set(key, watcher);
    return true;
  }

  private changed(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // A root that disappeared or appeared is re-armed by the next ensure().
      for (const [key, watcher] of this.watchers) {
        const root = key.startsWith('parent:') ? key.slice('parent:'.length) : key;
        if (key.startsWith('parent:') ? existsSync(root) : !existsSync(root)) {
          watcher.close();
          this.watchers.delete(key);
        }
      }
      this.generation++;
      this.onChange();
    }, this.debounceMs());
    this.timer.unref();
  }

  close(): void {
    clearTimeout(this.timer);
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }
}
