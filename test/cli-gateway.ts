/** Spawning the built `claw gateway` and waiting until it listens (shared by tests and benches; no vitest here). */
import { spawn, type ChildProcess } from 'node:child_process';

export interface CliGateway {
  child: ChildProcess;
  port: number;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** `claw gateway --port 0` with only PATH, HOME and `env`; resolves at its "listening" log line. */
export function spawnCliGateway(
  cli: string,
  env: Record<string, string>,
  args: string[] = [],
  onSpawn?: (child: ChildProcess) => void,
): Promise<CliGateway> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'gateway', '--port', '0', ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onSpawn?.(child);
    let stdout = '';
    let stderr = '';
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /"port":(\d+).*gateway listening/.exec(stdout);
      if (match) resolve({ child, port: Number(match[1]), stdout: () => stdout, stderr: () => stderr, exited });
    });
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    void exited.then((code) => reject(new Error(`gateway exited (${code}) before listening: ${stderr}${stdout}`)));
  });
}
