/**
 * Frames coming in and requests reaching methods. Every inbound frame goes through
 * onMessage: before hello-ok only a connect request is accepted (it goes to `onConnect`),
 * after it only requests. Every request, from any connection, reaches its method through
 * invoke(): scope, params, idempotency, handler; its answer or error goes back as a `res`.
 */
import type { RawData } from 'ws';
import {
  ErrorCodes,
  ProtocolError,
  type ErrorShape,
  type GatewayMethodContext,
  type KernelServices,
  type Logger,
  type RequestFrame,
} from '../../sdk/index.js';
import { CloseCodes } from './close-codes.js';
import { errorShape, MAX_PREAUTH_PAYLOAD_BYTES, parseFrame, protocolErrorShape } from './frames.js';
import type { Connection } from './connection.js';
import { DedupeCache, idempotencyFile, type Outcome, type Recovery } from './dedupe.js';
import type { GatewayEvents } from './events.js';
import { hasScope } from './handshake.js';
import type { GatewaySettings } from './settings.js';

export interface GatewayRpcOptions {
  kernel: KernelServices;
  logger: Logger;
  settings: GatewaySettings;
  events: GatewayEvents;
  /** A connection's first frame, a connect request. */
  onConnect(conn: Connection, frame: RequestFrame): void;
}

export class GatewayRpc {
  private readonly dedupe: DedupeCache;
  private inflight = 0;
  private idle?: () => void;

  constructor(private readonly options: GatewayRpcOptions) {
    this.dedupe = new DedupeCache(options.settings.idempotencyWindowMs, {
      file: idempotencyFile(options.kernel.paths.stateDir),
    });
  }

  onMessage(conn: Connection, data: RawData, isBinary: boolean): void {
    try {
      this.handleMessage(conn, data, isBinary);
    } catch (error) {
      // Nothing a client sends may take the gateway down: report, and drop this socket.
      this.options.logger.error(`frame handling failed: ${(error as Error).stack ?? String(error)}`, { conn: conn.id });
      this.fail(conn, errorShape(ErrorCodes.UNAVAILABLE, 'internal error while handling the frame'), CloseCodes.policy);
    }
  }

  /** Send an error (as a response when we know the request id, else as an `error` event) and close. */
  fail(conn: Connection, error: ErrorShape, code: number, id?: string): void {
    if (conn.state === 'closed') return;
    if (id) this.options.events.send(conn, { type: 'res', id, ok: false, error });
    else this.options.events.sendEvent(conn, 'error', error);
    void conn.close(code, error.message);
    conn.state = 'closed';
    clearTimeout(conn.handshakeTimer);
  }

  /** Resolves once running requests have answered, or after `ms`. */
  async drain(ms: number): Promise<void> {
    if (this.inflight === 0) return;
    await new Promise<void>((resolve) => {
      this.idle = resolve;
      setTimeout(resolve, ms).unref();
    });
  }

  close(): void {
    this.dedupe.close();
  }

  private handleMessage(conn: Connection, data: RawData, isBinary: boolean): void {
    if (conn.state === 'closed') return;
    if (conn.state === 'admitting') {
      // A client may pipeline requests behind its connect; they wait for the verdict.
      if (conn.held.length >= 32)
        this.fail(conn, errorShape(ErrorCodes.INVALID_REQUEST, 'too many frames before hello-ok'), CloseCodes.policy);
      else conn.held.push({ data, isBinary });
      return;
    }
    const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (isBinary) {
      this.fail(
        conn,
        errorShape(ErrorCodes.INVALID_REQUEST, 'binary frames are not supported: send JSON text frames'),
        CloseCodes.unsupportedData,
      );
      return;
    }
    if (conn.state === 'handshake' && buffer.length > MAX_PREAUTH_PAYLOAD_BYTES) {
      this.fail(
        conn,
        errorShape(
          ErrorCodes.INVALID_REQUEST,
          `frame of ${buffer.length} bytes exceeds the ${MAX_PREAUTH_PAYLOAD_BYTES}-byte limit before connect`,
        ),
        CloseCodes.tooBig,
      );
      return;
    }
    const text = buffer.toString('utf8');
    const parsed = parseFrame(text);
    if (!parsed.ok) {
      if (conn.state === 'handshake') this.fail(conn, parsed.error, CloseCodes.policy, idOf(text));
      else this.reply(conn, idOf(text), parsed.error);
      return;
    }
    const frame = parsed.frame;
    if (conn.state === 'handshake') {
      if (frame.type !== 'req' || frame.method !== 'connect') {
        const what = frame.type === 'req' ? `"${frame.method}"` : `a ${frame.type} frame`;
        this.fail(
          conn,
          errorShape(ErrorCodes.INVALID_REQUEST, `the first frame must be a connect request, got ${what}`),
          CloseCodes.policy,
          frame.type === 'req' ? frame.id : undefined,
        );
        return;
      }
      this.options.onConnect(conn, frame);
      return;
    }
    if (frame.type !== 'req') {
      this.reply(
        conn,
        undefined,
        errorShape(ErrorCodes.INVALID_REQUEST, `clients send req frames only, got a ${frame.type} frame`),
      );
      return;
    }
    void this.dispatch(conn, frame);
  }

  private reply(conn: Connection, id: string | undefined, error: ErrorShape): void {
    if (id) this.options.events.send(conn, { type: 'res', id, ok: false, error });
    else this.options.events.sendEvent(conn, 'error', error);
  }

  private async dispatch(conn: Connection, frame: RequestFrame): Promise<void> {
    const { events, logger } = this.options;
    this.inflight++;
    try {
      let outcome: Outcome;
      try {
        outcome = await this.invoke(frame.method, frame.params, {
          connId: conn.id,
          role: conn.role,
          scopes: conn.scopes,
          deviceId: conn.admission?.deviceId,
          client: conn.admission?.params.client,
          signal: conn.abort.signal,
          ack: (payload) => events.send(conn, { type: 'res', id: frame.id, ok: true, payload }),
        });
      } catch (error) {
        logger.error(`request ${frame.method} failed: ${(error as Error).stack ?? String(error)}`);
        outcome = {
          ok: false,
          error: errorShape(ErrorCodes.UNAVAILABLE, `${frame.method} failed: ${(error as Error).message}`),
        };
      }
      if (conn.state !== 'open') return;
      try {
        events.send(
          conn,
          outcome.ok
            ? { type: 'res', id: frame.id, ok: true, payload: outcome.payload }
            : { type: 'res', id: frame.id, ok: false, error: outcome.error },
        );
      } catch (error) {
        // A result that cannot be serialised (cycles, BigInt) still gets an answer.
        events.send(conn, {
          type: 'res',
          id: frame.id,
          ok: false,
          error: errorShape(
            ErrorCodes.UNAVAILABLE,
            `${frame.method} returned a result that is not JSON: ${(error as Error).message}`,
          ),
        });
      }
    } finally {
      this.inflight--;
      if (this.inflight === 0) this.idle?.();
    }
  }

  /** The single path from a request to a method: authorization, params, idempotency, handler. */
  async invoke(method: string, rawParams: unknown, ctx: GatewayMethodContext): Promise<Outcome> {
    const { kernel, logger } = this.options;
    const failure = (error: ErrorShape): Outcome => ({ ok: false, error });
    if (method === 'connect') return failure(errorShape(ErrorCodes.INVALID_REQUEST, 'already connected'));
    if (!kernel.protocol.method(method))
      return failure(errorShape(ErrorCodes.INVALID_REQUEST, `unknown method "${method}"`));
    let definition;
    try {
      definition = await kernel.capabilities.get('gatewayMethod', method);
    } catch (error) {
      return failure({
        ...errorShape(ErrorCodes.UNAVAILABLE, `method "${method}" is unavailable: ${(error as Error).message}`),
        retryable: false,
      });
    }
    const spec = kernel.protocol.method(method)!;
    if (spec.scope) {
      if (ctx.role !== 'operator' || !hasScope(ctx.scopes ?? [], spec.scope)) {
        return failure(
          errorShape(ErrorCodes.FORBIDDEN, `missing scope: ${spec.scope}`, {
            code: 'MISSING_SCOPE',
            missingScope: spec.scope,
            requiredScopes: [spec.scope],
          }),
        );
      }
    }
    let params = rawParams === undefined ? {} : rawParams;
    let idempotencyKey: string | undefined;
    if (spec.sideEffect) {
      const key =
        params !== null && typeof params === 'object'
          ? (params as { idempotencyKey?: unknown }).idempotencyKey
          : undefined;
      const optional = spec.sideEffect === 'optional' && key === undefined;
      if (!optional && (typeof key !== 'string' || key.length === 0 || key.length > 256)) {
        return failure(
          errorShape(
            ErrorCodes.INVALID_REQUEST,
            `${method} changes state, so params.idempotencyKey (a unique string per intended action) is required`,
            {
              code: 'IDEMPOTENCY_KEY_REQUIRED',
            },
          ),
        );
      }
      idempotencyKey = key as string | undefined;
      if (idempotencyKey !== undefined) {
        const { idempotencyKey: _drop, ...rest } = params as Record<string, unknown>;
        params = rest;
      }
    }
    const checked = kernel.protocol.validateParams(method, params);
    if (!checked.ok) {
      const summary = checked.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
      return failure(
        errorShape(ErrorCodes.INVALID_REQUEST, `invalid params for ${method}: ${summary}`, { issues: checked.issues }),
      );
    }
    // A method's answer, or its error as the wire carries it.
    const outcomeOf = async (work: () => unknown): Promise<Outcome> => {
      try {
        return { ok: true, payload: await work() };
      } catch (error) {
        if (isProtocolError(error)) return failure(protocolErrorShape(error));
        logger.error(`method ${method} failed: ${(error as Error).stack ?? String(error)}`, { method });
        return failure(errorShape(ErrorCodes.UNAVAILABLE, `${method} failed: ${(error as Error).message}`));
      }
    };
    if (!idempotencyKey) return outcomeOf(() => definition.handler(checked.value, ctx));
    const keyed = { ...ctx, idempotencyKey };
    // After a restart the method says what became of a request the restart cut short.
    const recover = definition.recover
      ? async (acks: unknown[]): Promise<Recovery> => {
          const recovered = await definition.recover!(checked.value, { ...keyed, acks });
          if (recovered.state === 'not-accepted') return recovered;
          if (recovered.state === 'done') return { state: 'done', outcome: { ok: true, payload: recovered.payload } };
          return {
            state: 'pending',
            ...(recovered.acks ? { acks: recovered.acks } : {}),
            outcome: outcomeOf(() => recovered.result),
          };
        }
      : undefined;
    // A retried two-phase request (agent) gets the same ack and the same final result.
    const result = await this.dedupe.run(
      `${method}\u0000${idempotencyKey}`,
      checked.value,
      (recordAck) =>
        outcomeOf(() =>
          definition.handler(checked.value, {
            ...keyed,
            ack: (payload) => {
              recordAck(payload);
              ctx.ack?.(payload);
            },
          }),
        ),
      ctx.ack,
      recover,
    );
    if ('conflict' in result) {
      return failure(
        errorShape(
          ErrorCodes.INVALID_REQUEST,
          `idempotencyKey "${idempotencyKey}" was already used for a ${method} request with different params; send a new key for a new request, or the same params to get the first result`,
          {
            code: 'IDEMPOTENCY_KEY_REUSED',
            idempotencyKey,
          },
        ),
      );
    }
    return result.outcome;
  }
}

/** The `id` of a frame we could not accept, if it has one, so the error can be correlated. */
function idOf(text: string): string | undefined {
  try {
    const value = JSON.parse(text) as { id?: unknown };
    return typeof value?.id === 'string' && value.id.length > 0 && value.id.length <= 128 ? value.id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A plugin's ProtocolError may come from another copy of the SDK module than the gateway's (each
 * loader instance has its own), so it is recognised by its name and code, not by class identity.
 */
function isProtocolError(error: unknown): error is ProtocolError {
  if (error instanceof ProtocolError) return true;
  return error instanceof Error && error.name === 'ProtocolError' && typeof (error as ProtocolError).code === 'string';
}
