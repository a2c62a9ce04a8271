/**
 * Background commands must not outlive the gateway, however it ends — including `kill -9`,
 * where no exit handler runs. Each command runs in its own process group; a tiny watchdog
 * shell (its own session, so a signal to the gateway's group does not reach it) is told the
 * group ids over a pipe. When that pipe closes — the gateway stopped, crashed or was killed —
 * the kernel closes it for us, and the watchdog sends SIGTERM, then SIGKILL, to every group
 * still registered, and exits. Started on the first command only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

/** Grace between SIGTERM and SIGKILL, in seconds (sh's sleep). */
const GRACE_SECONDS = 1;

const WATCHDOG = `
groups=" "
while read -r op id; do
  case "$op" in
    +) groups="$groups$id " ;;
    -) left=" "; for g in $groups; do [ "$g" = "$id" ] || left="$left$g "; done; groups=$left ;;
  esac
done
if [ "$groups" != " " ]; then
  for g in $groups; do kill -TERM -"$g" 2>/dev/null; done
  sleep ${GRACE_SECONDS}
  for g in $groups; do kill -KILL -"$g" 2>/dev/null; done
fi
`;

export class GroupReaper {
  private readonly groups = new Set<number>();
  private watchdog?: ChildProcess;

  /** The watchdog's pid (tests check it is a separate, living process). */
  get pid(): number | undefined {
    return this.watchdog?.pid;
  }

  add(pgid: number): void {
    this.groups.add(pgid);
    if (!this.watchdog) this.spawn();
    else this.send(`+ ${pgid}`);
  }

  remove(pgid: number): void {
    if (this.groups.delete(pgid)) this.send(`- ${pgid}`);
  }

  /** Normal stop: the watchdog kills whatever is still registered and exits. */
  close(): void {
    this.watchdog?.stdin?.end();
    this.watchdog = undefined;
    this.groups.clear();
  }

  private spawn(): void {
    const child = spawn('/bin/sh', ['-c', WATCHDOG], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    this.watchdog = child;
    // Neither the watchdog nor its pipe may keep the gateway alive.
    child.unref();
    (child.stdin as Socket | null)?.unref();
    child.stdin?.on('error', () => {});
    // Killed by someone else: a new one is started (with every group) on the next command.
    child.on('exit', () => {
      if (this.watchdog === child) this.watchdog = undefined;
    });
    child.on('error', () => {
      if (this.watchdog === child) this.watchdog = undefined;
    });
    for (const pgid of this.groups) this.send(`+ ${pgid}`);
  }

  private send(line: string): void {
    const stdin = this.watchdog?.stdin;
    if (stdin?.writable) stdin.write(`${line}\n`);
  }
}
