/**
 * One long-lived `qmd mcp` process per agent, spoken to over stdio (MCP: newline-delimited
 * JSON-RPC 2.0). Starting QMD costs ≈ 300 ms (Node, its SQLite, its MCP server); a warm
 * query over the open index costs about a millisecond, so searches go to a process that
 * stays up. It is started on the first search, started again on the next call after it
 * dies, killed (with anything it started) when a call outlives its timeout or it prints
 * something that is not JSON-RPC, and ended with the index. Every failure is a QmdError.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  firstLine,
  INDEX_ARGS,
  missingCommand,
  privateSpawnArgs,
  QmdError,
  spawnFailure,
  type QmdCommand,
} from './qmd-cli.js';

/** The MCP revision this client speaks; QMD 2.8 answers with the same one. */
const PROTOCOL_VERSION = '2025-06-18';
/** A line beyond this is a runaway process, not a search answer. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;
const STDERR_KEEP = 16 * 1024;

export interface QmdServerOptions {
  command: () => QmdCommand;
  env: () => Record<string, string>;
  cwd: string;
  /**
   * Longest the process may take to start and answer `initialize` before it is killed. A
   * call waits for the start only as long as its own timeout; the start goes on meanwhile.
   */
  startTimeoutMs: number;
  /** Told when a process ends on its own (not through close() or a kill of ours). */
  onExit?: (reason: string) => void;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Running {
  child: ChildProcess;
  pending: Map<number, Pending>;
  /** Settles when the process has exited; the reason it gave. */
  exited: Promise<string>;
  ready: Promise<void>;
  stderr: string;
  /** Set when we ended it (timeout, protocol error, close): its exit is not news. */
  endedByUs: boolean;
  /** Calls in flight that may take long (killOnTimeout off): while any runs, a timeout kills nothing. */
  slowCalls: number;
}

export interface CallOptions {
  /**
   * Kill the process when the call times out (default): a call that hangs means QMD is stuck.
   * Off for a call that may legitimately take long once, such as the first vector search,
   * which loads the embedding model (and holds QMD up meanwhile): the process goes on, no
   * other call's timeout kills it either, and later calls find the model loaded.
   */
  killOnTimeout?: boolean;
}

/** A tools/call answer: QMD puts its results in `structuredContent`. */
export interface McpToolResult {
  content?: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export class QmdServer {
  private running?: Running;
  private nextId = 1;
  private closed = false;
  /** How many processes were started (a restart adds one). */
  starts = 0;

  constructor(private readonly options: QmdServerOptions) {}

  /** The live process's pid, if one is up. */
  get pid(): number | undefined {
    return this.running?.child.pid;
  }

  /** Start the process now (if it is not up) so the first search does not wait for it. */
  warm(): void {
    if (this.closed || this.running) return;
    try {
      this.start();
    } catch {
      // Missing command: the next search reports it.
    }
  }

  /**
   * Call an MCP tool; starts the process first when none is up. A process that dies during
   * the call (killed, crashed) is started again and the call made once more.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    signal?: AbortSignal,
    options: CallOptions = {},
  ): Promise<McpToolResult> {
    try {
      return await this.callOnce(name, args, timeoutMs, signal, options);
    } catch (error) {
      if (!(error instanceof QmdError) || error.kind !== 'exit' || this.closed) throw error;
      return this.callOnce(name, args, timeoutMs, signal, options);
    }
  }

  private async callOnce(
    name: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    options: CallOptions,
  ): Promise<McpToolResult> {
    if (this.closed) throw new QmdError('spawn', 'the QMD server was closed');
    const running = this.running ?? this.start();
    await withTimeout(running.ready, timeoutMs, `qmd mcp did not answer within ${timeoutMs} ms (still starting)`);
    const killOnTimeout = options.killOnTimeout ?? true;
    if (!killOnTimeout) running.slowCalls++;
    let result: McpToolResult;
    try {
      result = (await this.request(
        running,
        'tools/call',
        { name, arguments: args },
        timeoutMs,
        signal,
        `qmd ${name}`,
        killOnTimeout,
      )) as McpToolResult;
    } finally {
      if (!killOnTimeout) running.slowCalls--;
    }
    if (result?.isError) {
      const text = result.content?.find((item) => item.type === 'text')?.text ?? 'an error without a message';
      throw new QmdError('output', `qmd ${name} failed: ${firstLine(text)}`);
    }
    return result;
  }

  /** End the running process now; the next call starts a fresh one (which opens the index anew). */
  restart(): void {
    if (this.running) this.kill(this.running);
  }

  /** End the process (stdin EOF is QMD's own signal to shut down), killing it if it lingers. */
  async close(): Promise<void> {
    this.closed = true;
    const running = this.running;
    if (!running) return;
    running.endedByUs = true;
    running.child.stdin?.end();
    const graceful = await Promise.race([running.exited.then(() => true), delay(2000).then(() => false)]);
    if (!graceful) {
      this.kill(running);
      await running.exited;
    }
  }

  // ── process ─────────────────────────────────────────────────────────────────────

  private start(): Running {
    const command = this.options.command();
    const missing = missingCommand(command);
    if (missing) throw missing;
    const [file, argv] = privateSpawnArgs(command.path, [...INDEX_ARGS, 'mcp']);
    // Its own process group, so a kill also ends anything it started.
    const child = spawn(file, argv, {
      cwd: this.options.cwd,
      env: this.options.env(),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.starts++;
    let settleExit!: (reason: string) => void;
    const exited = new Promise<string>((resolve) => (settleExit = resolve));
    const running: Running = {
      child,
      pending: new Map(),
      exited,
      ready: Promise.resolve(),
      stderr: '',
      endedByUs: false,
      slowCalls: 0,
    };
    this.running = running;
    let buffer = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (text: string) => {
      buffer += text;
      for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n')) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (line) this.onLine(running, line);
      }
      if (buffer.length > MAX_LINE_BYTES)
        this.fail(running, new QmdError('output', `qmd mcp printed a line longer than ${MAX_LINE_BYTES} bytes`));
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (text: string) => {
      running.stderr = (running.stderr + text).slice(-STDERR_KEEP);
    });
    // A write to a process that just died is reported by its exit; this only keeps it from throwing.
    child.stdin!.on('error', () => undefined);
    let spawnError: QmdError | undefined;
    child.on('error', (error: NodeJS.ErrnoException) => {
      spawnError = spawnFailure(command, error);
      this.fail(running, spawnError);
    });
    child.on('close', (code, signal) => {
      const detail = lastLine(running.stderr);
      const reason =
        spawnError?.reason ??
        `qmd mcp ${signal ? `was killed by ${signal}` : `exited with code ${code}`}${detail ? `: ${detail}` : ''}`;
      if (this.running === running) this.running = undefined;
      for (const pending of running.pending.values())
        pending.reject(spawnError ?? new QmdError('exit', reason, running.stderr));
      running.pending.clear();
      if (!running.endedByUs && !this.closed) this.options.onExit?.(reason);
      settleExit(reason);
    });
    let initialized = false;
    const startTimer = setTimeout(() => {
      if (!initialized)
        this.fail(running, new QmdError('timeout', `qmd mcp did not start within ${this.options.startTimeoutMs} ms`));
    }, this.options.startTimeoutMs);
    startTimer.unref();
    const hello = { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'claw', version: '1' } };
    running.ready = this.request(
      running,
      'initialize',
      hello,
      this.options.startTimeoutMs + 1000,
      undefined,
      'qmd mcp initialize',
    ).then(() => {
      initialized = true;
      clearTimeout(startTimer);
      this.send(running, { jsonrpc: '2.0', method: 'notifications/initialized' });
    });
    // Awaited by callers; a start that fails with no caller waiting must not be "unhandled".
    running.ready.catch(() => undefined);
    return running;
  }

  private onLine(running: Running, line: string): void {
    let message: { id?: unknown; result?: unknown; error?: { message?: string }; method?: string };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      this.fail(
        running,
        new QmdError('output', `qmd mcp printed output that is not JSON-RPC: ${firstLine(line).slice(0, 120)}`),
      );
      return;
    }
    if (typeof message.id !== 'number') return; // a notification (logging, list changes): nothing waits for it
    const pending = running.pending.get(message.id);
    if (!pending) return;
    running.pending.delete(message.id);
    if (message.error)
      pending.reject(
        new QmdError('output', `qmd mcp refused the request: ${message.error.message ?? 'no reason given'}`),
      );
    else pending.resolve(message.result);
  }

  private send(running: Running, message: Record<string, unknown>): void {
    running.child.stdin!.write(`${JSON.stringify(message)}\n`);
  }

  private request(
    running: Running,
    method: string,
    params: Record<string, unknown>,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    what: string,
    killOnTimeout = true,
  ): Promise<unknown> {
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      // A call that hangs means the process is stuck: it is killed, the next call starts another.
      const timer = setTimeout(() => {
        running.pending.delete(id);
        done();
        const error = new QmdError('timeout', `${what} timed out after ${timeoutMs} ms`);
        reject(error);
        // Calls in flight on the same process share its fate, with the same reason. While a slow
        // call (a model loading) is in flight, a late answer is expected, not a sign of a hang.
        if (killOnTimeout && running.slowCalls === 0) this.fail(running, error);
      }, timeoutMs);
      const onAbort = () => {
        running.pending.delete(id);
        done();
        reject(signal?.reason ?? new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      running.pending.set(id, {
        resolve: (value) => {
          done();
          resolve(value);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      this.send(running, { jsonrpc: '2.0', id, method, params });
    });
  }

  private fail(running: Running, error: QmdError): void {
    for (const pending of running.pending.values()) pending.reject(error);
    running.pending.clear();
    this.kill(running);
  }

  private kill(running: Running): void {
    running.endedByUs = true;
    if (this.running === running) this.running = undefined;
    try {
      if (running.child.pid !== undefined) process.kill(-running.child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

function lastLine(text: string): string {
  const lines = text
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const line = lines.at(-1) ?? '';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

async function withTimeout<T>(promise: Promise<T>, ms: number, reason: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new QmdError('timeout', reason)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
