/** The sandbox slot's contract (`api.registerSandbox`): run one command inside the sandbox. */

export interface ExecRequest {
  command: string[];
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  stdin?: string;
  signal?: AbortSignal;
}

export interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
}

export interface SandboxBackend {
  exec(request: ExecRequest): Promise<ExecResult>;
  dispose?(): Promise<void> | void;
}
