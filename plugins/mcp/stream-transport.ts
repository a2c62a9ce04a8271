/**
 * MCP's stdio framing (one JSON-RPC message per line) over any process's stdin/stdout: a
 * server spawned on the host or one spawned inside a session's sandbox. The transport owns
 * the process: closing it ends the process, and the process ending closes it.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export interface ServerProcess {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** Settles when the process has ended. */
  exited: Promise<{ exitCode: number | null; signal: string | null }>;
  kill(signal: NodeJS.Signals): void;
}

/** The last lines the server wrote to stderr, kept for the error shown when it fails. */
const STDERR_KEEP = 4000;

export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private buffer = '';
  private closed = false;
  stderrTail = '';
  exit?: { exitCode: number | null; signal: string | null };

  constructor(private readonly child: ServerProcess) {}

  async start(): Promise<void> {
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.take(chunk));
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_KEEP);
    });
    this.child.stdin.on('error', (error) => this.onerror?.(error));
    void this.child.exited.then((exit) => {
      this.exit = exit;
      this.finish();
    });
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline).replace(/\r$/, '');
      this.buffer = this.buffer.slice(newline + 1);
      if (!line.trim()) continue;
      try {
        this.onmessage?.(JSON.parse(line) as JSONRPCMessage);
      } catch (error) {
        // Servers that log to stdout break the framing; report it and keep reading.
        this.onerror?.(new Error(`the server wrote a line that is not JSON-RPC: ${(error as Error).message}`));
      }
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the server process has ended'));
    return new Promise((resolve, reject) =>
      this.child.stdin.write(`${JSON.stringify(message)}\n`, (error) => (error ? reject(error) : resolve())),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.child.stdin.end();
    this.child.kill('SIGTERM');
    // A server that ignores SIGTERM is not left behind.
    const force = setTimeout(() => this.child.kill('SIGKILL'), 2000);
    force.unref();
    await this.child.exited;
    clearTimeout(force);
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
