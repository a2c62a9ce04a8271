/**
 * Turns `node.invoke.request` events into `node.invoke.result` calls. Commands are a map
 * `{ [command]: NodeCommand }` merged from several modules (system.* here; file transfer and
 * browser.proxy from their own files), so adding a command is adding an entry.
 *
 * A command marked `once` changes something: with an idempotencyKey it is recorded in the
 * journal before it starts, and a repeat of the key never runs it again (journal.ts).
 */
import type { InvokeJournal, InvokeOutcome } from './journal.js';

export interface InvokeRequest {
  id: string;
  nodeId: string;
  command: string;
  paramsJSON: string | null;
  timeoutMs: number | null;
  idempotencyKey: string | null;
  sessionKey?: string;
}

export interface InvokeContext {
  request: InvokeRequest;
  /** Aborted by `node.invoke.cancel` (the caller gave up) and when the node host stops. */
  signal: AbortSignal;
  /** `node.event` to the gateway (exec.finished, exec.denied, …); failures are dropped. */
  sendEvent(event: string, payload: unknown): Promise<void>;
}

export type InvokeAnswer = { ok: true; payload: unknown } | { ok: false; error: { code: string; message: string } };

export interface NodeCommand {
  /** The capability it belongs to (`caps` in connect): "system", "browser", … */
  cap: string;
  /** It changes something: at most one run per idempotencyKey. */
  once?: boolean;
  /** `params` is paramsJSON decoded (undefined when none was sent). */
  run(params: unknown, ctx: InvokeContext): Promise<InvokeAnswer>;
}

export type NodeCommands = Record<string, NodeCommand>;

/** A refusal in OpenClaw's terms: `code` (INVALID_REQUEST, UNAVAILABLE, SYSTEM_RUN_DENIED, …) and its message. */
export class NodeCommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const fail = (code: string, message: string): InvokeAnswer => ({ ok: false, error: { code, message } });

/** Params that must be an object (OpenClaw's decodeParams wording when they are missing). */
export function objectParams(params: unknown): Record<string, unknown> {
  if (params === undefined) throw new NodeCommandError('INVALID_REQUEST', 'INVALID_REQUEST: paramsJSON required');
  if (!params || typeof params !== 'object' || Array.isArray(params))
    throw new NodeCommandError('INVALID_REQUEST', 'INVALID_REQUEST: params must be an object');
  return params as Record<string, unknown>;
}

export interface Transport {
  request(method: string, params: unknown): Promise<unknown>;
}

export class Dispatcher {
  private readonly running = new Map<string, AbortController>();
  /** idempotencyKey → the outcome of the run in flight, for a repeat that arrives meanwhile. */
  private readonly inFlight = new Map<string, Promise<InvokeOutcome>>();
  private readonly stopping = new AbortController();

  constructor(
    private readonly commands: NodeCommands,
    private readonly journal: InvokeJournal,
    private readonly transport: Transport,
    private readonly log: (line: string) => void,
  ) {}

  /** What the node declares in connect. */
  manifest(): { caps: string[]; commands: string[] } {
    const commands = Object.keys(this.commands).sort();
    const caps = [...new Set(commands.map((name) => this.commands[name]!.cap))].sort();
    return { caps, commands };
  }

  /** Handle one request; resolves once its result was sent (or could not be). */
  async invoke(request: InvokeRequest): Promise<void> {
    const controller = new AbortController();
    const onStop = () => controller.abort();
    this.stopping.signal.addEventListener('abort', onStop, { once: true });
    this.running.set(request.id, controller);
    try {
      const outcome = await this.outcome(request, controller.signal);
      // A cancelled invoke has no one waiting for its answer (OpenClaw sends none either).
      if (controller.signal.aborted) return;
      await this.send(request, outcome);
    } finally {
      this.running.delete(request.id);
      this.stopping.signal.removeEventListener('abort', onStop);
    }
  }

  cancel(invokeId: string): void {
    this.running.get(invokeId)?.abort();
  }

  /** The node host stops: every command still running is cancelled. */
  stop(): void {
    this.stopping.abort();
  }

  private async outcome(request: InvokeRequest, signal: AbortSignal): Promise<InvokeOutcome> {
    const command = this.commands[request.command];
    if (!command) return toOutcome(fail('UNAVAILABLE', 'command not supported'));
    const key = request.idempotencyKey;
    if (!command.once || !key) return this.perform(command, request, signal);
    const waiting = this.inFlight.get(key);
    if (waiting) return waiting;
    const claim = this.journal.claim(key, request.command);
    if (claim.state === 'done') return claim.outcome;
    if (claim.state === 'interrupted' || claim.state === 'running')
      return toOutcome(
        fail(
          'INTERRUPTED',
          `${request.command} with idempotencyKey ${key} was started on this node ` +
            `${claim.state === 'running' ? 'and is still running' : `at ${new Date(claim.startedAt).toISOString()}, but the node host stopped before it finished`}; ` +
            'it was not run again (whether it completed is unknown)',
        ),
      );
    const run = this.perform(command, request, signal).then((outcome) => {
      this.journal.finish(key, outcome);
      return outcome;
    });
    this.inFlight.set(key, run);
    try {
      return await run;
    } finally {
      this.inFlight.delete(key);
    }
  }

  private async perform(command: NodeCommand, request: InvokeRequest, signal: AbortSignal): Promise<InvokeOutcome> {
    let params: unknown;
    if (request.paramsJSON !== null && request.paramsJSON !== '') {
      try {
        params = JSON.parse(request.paramsJSON);
      } catch {
        return toOutcome(fail('INVALID_REQUEST', 'INVALID_REQUEST: paramsJSON malformed JSON'));
      }
    }
    const ctx: InvokeContext = {
      request,
      signal,
      sendEvent: async (event, payload) => {
        try {
          await this.transport.request('node.event', { event, payloadJSON: JSON.stringify(payload) });
        } catch {
          // Events are informational; the invoke's result is what the caller waits for.
        }
      },
    };
    try {
      return toOutcome(await command.run(params, ctx));
    } catch (error) {
      if (error instanceof NodeCommandError) return toOutcome(fail(error.code, error.message));
      this.log(`node host: ${request.command} (${request.id}) failed: ${(error as Error).message}`);
      return toOutcome(fail('UNAVAILABLE', 'node invocation failed'));
    }
  }

  private async send(request: InvokeRequest, outcome: InvokeOutcome): Promise<void> {
    try {
      await this.transport.request('node.invoke.result', {
        id: request.id,
        nodeId: request.nodeId,
        ok: outcome.ok,
        ...(outcome.payloadJSON !== undefined ? { payloadJSON: outcome.payloadJSON } : {}),
        ...(outcome.error ? { error: outcome.error } : {}),
      });
    } catch (error) {
      this.log(
        `node host: the result of ${request.command} (${request.id}) could not be sent: ${(error as Error).message}`,
      );
    }
  }
}

function toOutcome(answer: InvokeAnswer): InvokeOutcome {
  return answer.ok ? { ok: true, payloadJSON: JSON.stringify(answer.payload ?? null) } : answer;
}

/** OpenClaw's coerceNodeInvokePayload: the request fields, or null when the event is not one. */
export function invokeRequest(payload: unknown): InvokeRequest | null {
  if (!payload || typeof payload !== 'object') return null;
  const value = payload as Record<string, unknown>;
  const text = (field: unknown) => (typeof field === 'string' ? field.trim() : '');
  const id = text(value.id);
  const nodeId = text(value.nodeId);
  const command = text(value.command);
  if (!id || !nodeId || !command) return null;
  const paramsJSON =
    typeof value.paramsJSON === 'string'
      ? value.paramsJSON
      : value.params !== undefined
        ? JSON.stringify(value.params)
        : null;
  const sessionKey = text(value.sessionKey);
  return {
    id,
    nodeId,
    command,
    paramsJSON,
    timeoutMs: typeof value.timeoutMs === 'number' ? value.timeoutMs : null,
    idempotencyKey: typeof value.idempotencyKey === 'string' ? value.idempotencyKey : null,
    ...(sessionKey ? { sessionKey } : {}),
  };
}
