/**
 * Running a local program for the media step (a whisper CLI, ffmpeg): no shell, arguments as
 * a list, a deadline after which it is killed, output capped.
 */
import { execFile } from 'node:child_process';

export interface RunResult {
  stdout: Buffer;
  stderr: string;
}

export class RunFailed extends Error {}

export function runProgram(
  command: string,
  args: readonly string[],
  options: { timeoutMs: number; signal?: AbortSignal; maxOutputBytes?: number; cwd?: string },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args as string[],
      {
        shell: false,
        encoding: 'buffer',
        timeout: options.timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: options.maxOutputBytes ?? 16 * 1024 * 1024,
        windowsHide: true,
        ...(options.cwd ? { cwd: options.cwd } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      },
      (error, stdout, stderr) => {
        const err = stderr.toString('utf8').trim().slice(-500);
        if (!error) return resolve({ stdout, stderr: err });
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return reject(new RunFailed(`${command} was not found`));
        if (error.killed && !options.signal?.aborted)
          return reject(new RunFailed(`${command} did not finish within ${options.timeoutMs / 1000} s`));
        reject(new RunFailed(`${command} failed (${error.message.split('\n')[0]})${err ? `: ${err}` : ''}`));
      },
    );
    child.stdin?.end();
  });
}

const available = new Map<string, Promise<boolean>>();

/** Whether `command` runs (`command -version`), asked once per process. */
export function hasProgram(command: string): Promise<boolean> {
  let known = available.get(command);
  if (!known) {
    known = runProgram(command, ['-version'], { timeoutMs: 5000 }).then(
      () => true,
      () => false,
    );
    available.set(command, known);
  }
  return known;
}
