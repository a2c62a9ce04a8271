/**
 * One child process without a shell: input on stdin, stdout and stderr kept up to a cap, a
 * deadline and the caller's signal both kill it. Shared by the local CLI voice and ffmpeg.
 */
import { spawn } from 'node:child_process';

export const MAX_AUDIO_BYTES = 50 * 1024 * 1024;
const MAX_STDERR_BYTES = 1024 * 1024;

export interface RunOptions {
  input?: Buffer | string;
  timeoutMs: number;
  cwd?: string;
  env?: Record<string, string | undefined>;
  signal?: AbortSignal;
}

export async function runCommand(what: string, command: string, args: string[], options: RunOptions): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const child = spawn(command, args, {
      shell: false,
      cwd: options.cwd,
      env: options.env as NodeJS.ProcessEnv | undefined,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let failure: string | undefined;
    const stop = (reason: string) => {
      failure ??= reason;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(`${what} took longer than ${options.timeoutMs} ms`), options.timeoutMs);
    const onAbort = () => stop(`${what} was cancelled`);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_AUDIO_BYTES) return stop(`${what} wrote more than ${MAX_AUDIO_BYTES} bytes`);
      out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      errBytes += chunk.length;
      if (errBytes > MAX_STDERR_BYTES) return stop(`${what} wrote more than ${MAX_STDERR_BYTES} bytes of diagnostics`);
      err.push(chunk);
    });
    child.stdin.on('error', () => undefined); // a command that does not read stdin closes it early
    let settled = false;
    const done = () => {
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'ENOENT' ? `${what}: "${command}" was not found` : `${what}: ${error.message}`;
      if (child.pid !== undefined) return stop(reason);
      // It never started: no close follows.
      if (!settled) (done(), reject(new Error(reason)));
    });
    child.on('close', (code, signal) => {
      if (settled) return;
      done();
      const stderr = Buffer.concat(err).toString('utf8').trim().split('\n').slice(-3).join(' ').slice(0, 300);
      if (failure) return reject(new Error(failure));
      if (code !== 0)
        return reject(new Error(`${what} failed (${signal ?? `exit ${code}`})${stderr ? `: ${stderr}` : ''}`));
      resolve(Buffer.concat(out));
    });
    child.stdin.end(options.input ?? '');
  });
}
