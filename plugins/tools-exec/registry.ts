/**
 * The commands of one plugin instance. Running ones are tracked so they can all be killed
 * when the kernel stops; finished background ones stay readable for a while, within a cap.
 * A command's process group is tracked until it is empty (a shell that exited may have left
 * children running), and registered with the watchdog (reaper.ts) so it dies with the
 * gateway even when the gateway is killed outright.
 */
import { randomBytes } from 'node:crypto';
import { GroupReaper } from './reaper.js';
import { KILL_GRACE_MS, ProcessSession, signalGroup, type SessionOptions } from './session.js';

export interface RegistryOptions {
  finishedTtlMs: number;
  maxFinished: number;
}

export class SessionRegistry {
  private readonly sessions = new Map<string, ProcessSession>();
  private readonly reaper = new GroupReaper();
  /** Groups whose shell has ended while something it started still runs. */
  private readonly lingering = new Set<number>();
  /** Kills every running group if Node exits without the kernel being stopped first. */
  private readonly onProcessExit = () => {
    for (const session of this.sessions.values()) if (session.running) session.killNow();
    for (const pgid of this.lingering) signalGroup(pgid, 'SIGKILL');
  };
  private exitHookInstalled = false;

  constructor(private readonly options: RegistryOptions) {}

  start(options: Omit<SessionOptions, 'id'>): ProcessSession {
    let id: string;
    do id = randomBytes(4).toString('hex');
    while (this.sessions.has(id));
    const session = new ProcessSession({ ...options, id });
    this.sessions.set(id, session);
    if (session.pid !== undefined) this.reaper.add(session.pid);
    this.updateExitHook();
    void session.done.then(() => {
      if (session.pid !== undefined) {
        if (groupAlive(session.pid)) this.lingering.add(session.pid);
        else this.reaper.remove(session.pid);
      }
      if (!session.backgrounded) this.sessions.delete(session.id);
      this.prune();
      this.updateExitHook();
    });
    return session;
  }

  /**
   * A background session visible to `agentId` where it runs (`place`: "host" or a sandbox id):
   * sessions are scoped per agent, and a sandboxed session never sees or signals host commands.
   */
  get(id: string, agentId: string | undefined, place: string): ProcessSession | undefined {
    const session = this.sessions.get(id);
    return session && session.backgrounded && session.agentId === agentId && session.place === place
      ? session
      : undefined;
  }

  list(agentId: string | undefined, place: string): ProcessSession[] {
    this.prune();
    return [...this.sessions.values()].filter(
      (session) => session.backgrounded && session.agentId === agentId && session.place === place,
    );
  }

  /**
   * Stop every running command and what finished ones left running (SIGTERM, then SIGKILL
   * after the grace period) and forget them all.
   */
  async stopAll(): Promise<void> {
    const running = [...this.sessions.values()].filter((session) => session.running);
    const lingering = [...this.lingering];
    for (const session of running) session.stop('killed');
    for (const pgid of lingering) signalGroup(pgid, 'SIGTERM');
    await Promise.race([Promise.all(running.map((session) => session.done)), delay(KILL_GRACE_MS + 500)]);
    for (const session of running) if (session.running) session.killNow();
    for (const pgid of lingering) signalGroup(pgid, 'SIGKILL');
    this.sessions.clear();
    this.lingering.clear();
    this.reaper.close();
    this.updateExitHook();
  }

  private prune(): void {
    for (const pgid of this.lingering) {
      if (groupAlive(pgid)) continue;
      this.lingering.delete(pgid);
      this.reaper.remove(pgid);
    }
    const now = Date.now();
    const finished = [...this.sessions.values()]
      .filter((session) => !session.running)
      .sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0));
    const excess = finished.length - this.options.maxFinished;
    finished.forEach((session, index) => {
      if (index < excess || now - (session.endedAt ?? now) > this.options.finishedTtlMs)
        this.sessions.delete(session.id);
    });
  }

  private updateExitHook(): void {
    const needed = this.lingering.size > 0 || [...this.sessions.values()].some((session) => session.running);
    if (needed && !this.exitHookInstalled) process.on('exit', this.onProcessExit);
    if (!needed && this.exitHookInstalled) process.off('exit', this.onProcessExit);
    this.exitHookInstalled = needed;
  }
}

/** Whether any process is left in the group (signal 0 only checks). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
