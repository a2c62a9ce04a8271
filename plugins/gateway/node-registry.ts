/**
 * The node connections open now, and the commands sent to them that wait for an answer.
 *
 * A command goes to one node's connection only (node.invoke.request), and only that connection
 * may answer it (node.invoke.result with the id it was sent). Progress chunks are handed on in
 * seq order. When the node's connection closes, every invoke waiting on it fails at once with
 * NODE_DISCONNECTED: nothing is re-sent, because the node may already have run it. An
 * idempotencyKey seen within the window gets the first send's outcome instead of a second send.
 */
import { randomUUID } from 'node:crypto';
import { NodeInvokeError } from '../../sdk/index.js';
import type { Connection } from './connection.js';

export type SendToConnection = (conn: Connection, event: string, payload: unknown) => boolean;

/** What a node answered: its payload as an object or as the JSON text it sent. */
export interface NodeAnswer {
  payload: unknown;
  payloadJSON: string | null;
}

export interface DispatchOptions {
  timeoutMs: number;
  idempotencyKey: string;
  /** The caller chose the key (it may ask again): keep the outcome for the window. */
  remember: boolean;
  sessionKey?: string;
  signal?: AbortSignal;
  onProgress?: (chunk: string) => void;
}

interface PendingInvoke {
  id: string;
  nodeId: string;
  command: string;
  conn: Connection;
  resolve(answer: NodeAnswer): void;
  reject(error: NodeInvokeError): void;
  onProgress?: (chunk: string) => void;
  nextSeq: number;
  early: Map<number, string>;
  cleanup(): void;
}

interface Remembered {
  command: string;
  outcome: Promise<NodeAnswer>;
  /** Infinity while the node has not answered: the window starts when the outcome is known. */
  expiresAt: number;
}

/** Out-of-order progress chunks held per invoke before the missing one arrives. */
const MAX_EARLY_CHUNKS = 128;
/** setTimeout's ceiling. */
const MAX_TIMEOUT_MS = 2_147_483_647;

export class NodeRegistry {
  private readonly live = new Map<string, Connection>();
  private readonly pending = new Map<string, PendingInvoke>();
  private readonly remembered = new Map<string, Remembered>();
  private prunedAt = 0;
  private send?: SendToConnection;

  constructor(private readonly idempotencyWindowMs: number) {}

  /** The running server's way of sending one connection an event. */
  attach(send: SendToConnection | undefined): void {
    this.send = send;
  }

  /** A node's connection was admitted; it replaces any older one of the same node. */
  add(nodeId: string, conn: Connection): void {
    this.live.set(nodeId, conn);
    conn.abort.signal.addEventListener('abort', () => this.closed(nodeId, conn), { once: true });
  }

  get(nodeId: string): Connection | undefined {
    const conn = this.live.get(nodeId);
    return conn && conn.state === 'open' ? conn : undefined;
  }

  connected(): Array<[nodeId: string, conn: Connection]> {
    return [...this.live].filter(([, conn]) => conn.state === 'open');
  }

  /** Tell one node something (node.pair.resolved); false when it is not connected. */
  notify(nodeId: string, event: string, payload: unknown): boolean {
    const conn = this.get(nodeId);
    return conn !== undefined && this.send !== undefined && this.send(conn, event, payload);
  }

  /** How many invokes wait for an answer (bench and tests watch it). */
  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Send a command to the node's current connection and wait for its answer. A key seen in the
   * window returns that send's outcome (or its result still to come); it is never sent twice.
   */
  dispatch(nodeId: string, command: string, params: unknown, options: DispatchOptions): Promise<NodeAnswer> {
    this.forgetExpired();
    const key = `${nodeId}\0${options.idempotencyKey}`;
    const seen = this.remembered.get(key);
    if (seen) {
      if (seen.command !== command)
        return Promise.reject(
          new NodeInvokeError(
            'INVALID_REQUEST',
            `idempotencyKey "${options.idempotencyKey}" was already used for "${seen.command}" on node "${nodeId}"`,
            nodeId,
          ),
        );
      return seen.outcome;
    }
    const conn = this.get(nodeId);
    if (!conn || !this.send)
      return Promise.reject(new NodeInvokeError('NOT_CONNECTED', `node "${nodeId}" is not connected`, nodeId));
    if (options.signal?.aborted)
      return Promise.reject(
        new NodeInvokeError('ABORTED', `invoke of "${command}" on node "${nodeId}" was cancelled`, nodeId),
      );
    const outcome = this.sendInvoke(conn, nodeId, command, params, options);
    if (options.remember) {
      const entry: Remembered = { command, outcome, expiresAt: Infinity };
      this.remembered.set(key, entry);
      const settled = () => (entry.expiresAt = Date.now() + this.idempotencyWindowMs);
      // Also keeps a failure nobody awaits any more from counting as unhandled.
      outcome.then(settled, settled);
    }
    return outcome;
  }

  private sendInvoke(
    conn: Connection,
    nodeId: string,
    command: string,
    params: unknown,
    options: DispatchOptions,
  ): Promise<NodeAnswer> {
    const id = randomUUID();
    const timeoutMs = Math.min(Math.max(1, Math.trunc(options.timeoutMs)), MAX_TIMEOUT_MS);
    return new Promise<NodeAnswer>((resolve, reject) => {
      const settle = () => this.pending.delete(id) && (pending.cleanup(), true);
      const timer = setTimeout(() => {
        if (!settle()) return;
        this.send?.(conn, 'node.invoke.cancel', { invokeId: id, nodeId });
        reject(
          new NodeInvokeError('TIMEOUT', `node "${nodeId}" did not answer "${command}" within ${timeoutMs} ms`, nodeId),
        );
      }, timeoutMs);
      const onAbort = () => {
        if (!settle()) return;
        this.send?.(conn, 'node.invoke.cancel', { invokeId: id, nodeId });
        reject(new NodeInvokeError('ABORTED', `invoke of "${command}" on node "${nodeId}" was cancelled`, nodeId));
      };
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const pending: PendingInvoke = {
        id,
        nodeId,
        command,
        conn,
        resolve: (answer) => settle() && resolve(answer),
        reject: (error) => settle() && reject(error),
        onProgress: options.onProgress,
        nextSeq: 0,
        early: new Map(),
        cleanup: () => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
        },
      };
      this.pending.set(id, pending);
      const sent = this.send!(conn, 'node.invoke.request', {
        id,
        nodeId,
        command,
        paramsJSON: params === undefined ? null : JSON.stringify(params),
        timeoutMs,
        idempotencyKey: options.idempotencyKey,
        ...(options.sessionKey ? { sessionKey: options.sessionKey } : {}),
      });
      if (!sent)
        pending.reject(new NodeInvokeError('NOT_CONNECTED', `node "${nodeId}" could not be sent "${command}"`, nodeId));
    });
  }

  /** A node.invoke.result: true when it answered an invoke this connection was sent. */
  result(
    connId: string | undefined,
    answer: {
      id: string;
      nodeId: string;
      ok: boolean;
      payload?: unknown;
      payloadJSON?: string;
      error?: { code?: string; message?: string };
    },
  ): boolean {
    const pending = this.pending.get(answer.id);
    if (!pending || pending.conn.id !== connId || pending.nodeId !== answer.nodeId) return false;
    if (answer.ok) pending.resolve({ payload: answer.payload, payloadJSON: answer.payloadJSON ?? null });
    else {
      const code = answer.error?.code ?? 'UNAVAILABLE';
      const message = answer.error?.message ?? `node "${pending.nodeId}" failed "${pending.command}"`;
      pending.reject(new NodeInvokeError(code, message, pending.nodeId));
    }
    return true;
  }

  /** A node.invoke.progress chunk: handed on in seq order; true when it belongs to a waiting invoke. */
  progress(
    connId: string | undefined,
    chunk: { invokeId: string; nodeId: string; seq: number; chunk: string },
  ): boolean {
    const pending = this.pending.get(chunk.invokeId);
    if (!pending || pending.conn.id !== connId || pending.nodeId !== chunk.nodeId || chunk.seq < pending.nextSeq)
      return false;
    if (!pending.onProgress) return true;
    if (chunk.seq > pending.nextSeq && pending.early.size >= MAX_EARLY_CHUNKS) return false;
    pending.early.set(chunk.seq, chunk.chunk);
    for (let next = pending.early.get(pending.nextSeq); next !== undefined; next = pending.early.get(pending.nextSeq)) {
      pending.early.delete(pending.nextSeq);
      pending.nextSeq++;
      try {
        pending.onProgress(next);
      } catch (error) {
        this.send?.(pending.conn, 'node.invoke.cancel', { invokeId: pending.id, nodeId: pending.nodeId });
        pending.reject(
          new NodeInvokeError('ABORTED', `progress handler failed: ${(error as Error).message}`, pending.nodeId),
        );
        break;
      }
    }
    return true;
  }

  private closed(nodeId: string, conn: Connection): void {
    if (this.live.get(nodeId) === conn) this.live.delete(nodeId);
    for (const pending of [...this.pending.values()]) {
      if (pending.conn !== conn) continue;
      pending.reject(
        new NodeInvokeError(
          'NODE_DISCONNECTED',
          `node "${nodeId}" disconnected while running "${pending.command}"; it was not retried (the node may or may not have run it)`,
          nodeId,
        ),
      );
    }
  }

  private forgetExpired(): void {
    const now = Date.now();
    // A scan at most once a second keeps a burst of invokes from scanning the table each time.
    if (now - this.prunedAt < 1000) return;
    this.prunedAt = now;
    for (const [key, entry] of this.remembered) if (entry.expiresAt <= now) this.remembered.delete(key);
  }
}
