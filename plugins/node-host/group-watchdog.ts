/**
 * A command the node host starts must not outlive it — also when the node host is killed
 * with SIGKILL and no exit handler runs. Every command gets a process group of its own, and
 * a small shell started in its own session holds the read end of a pipe from the node host,
 * on which it is told which groups are alive. When the pipe reaches end-of-file (the node
 * host is gone, however it went), the shell sends SIGTERM to each group still listed, then
 * SIGKILL a second later, and exits. (The gateway's exec tool does the same for its
 * background commands; plugins share no code, so this is the node host's own.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

const SCRIPT = `
alive=" "
for g in "$@"; do alive="$alive$g "; done
while read -r verb pgid; do
  if [ "$verb" = add ]; then alive="$alive$pgid "; fi
  if [ "$verb" = del ]; then alive=$(printf '%s' "$alive" | sed "s/ $pgid / /"); fi
done
[ "$alive" = " " ] && exit 0
for g in $alive; do kill -TERM -"$g" 2>/dev/null; done
sleep 1
for g in $alive; do kill -KILL -"$g" 2>/dev/null; done
`;

export class GroupWatchdog {
  private readonly groups = new Set<number>();
  private shell?: ChildProcess;

  get pid(): number | undefined {
    return this.shell?.pid;
  }

  /**
   * Watch this group; `known` runs once the shell has it (in its arguments, or once the line
   * naming it is written), so a caller can hold the command back until then.
   */
  track(pgid: number, known: () => void = () => {}): void {
    this.groups.add(pgid);
    if (this.shell) this.tell(`add ${pgid}`, known);
    else {
      this.start();
      known();
    }
  }

  untrack(pgid: number): void {
    if (this.groups.delete(pgid)) this.tell(`del ${pgid}`);
  }

  /** The node host stops: whatever still runs is ended by the shell, which then exits. */
  close(): void {
    this.shell?.stdin?.end();
    this.shell = undefined;
    this.groups.clear();
  }

  private start(): void {
    // The groups known now go in its arguments: a line still in flight when the node host is
    // killed would be lost, and the first command is the one most likely to be running then.
    const shell = spawn('/bin/sh', ['-c', SCRIPT, 'node-host-watchdog', ...[...this.groups].map(String)], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    this.shell = shell;
    // Neither the shell nor its pipe may keep the node host's event loop alive.
    shell.unref();
    (shell.stdin as Socket | null)?.unref();
    shell.stdin?.on('error', () => {});
    const forget = () => {
      if (this.shell === shell) this.shell = undefined;
    };
    shell.on('exit', forget);
    shell.on('error', forget);
  }

  private tell(line: string, written: () => void = () => {}): void {
    const stdin = this.shell?.stdin;
    if (stdin?.writable) stdin.write(`${line}\n`, () => written());
    else written();
  }
}
