/**
 * The control-plane contracts behind `api.registerGatewayMethod`, `registerCommand` and
 * `registerHttpRoute`. The kernel stores these by a minimal shape (a handler, a name, a
 * path); the plugins that serve them (the gateway, the run dispatcher) give them meaning.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonSchema, ToolContext } from '../../kernel/index.js';

export interface GatewayMethodContext {
  /** Connection the request arrived on, when it came over the wire. */
  connId?: string;
  role?: string;
  scopes?: readonly string[];
  /** Paired device identity of the caller, when it presented one. */
  deviceId?: string;
  client?: { id: string; version?: string; platform?: string; mode?: string; instanceId?: string };
  /** Aborted when the caller disconnects or the gateway shuts down. */
  signal?: AbortSignal;
  /**
   * Send an interim successful response now (for example `{ runId, status: "accepted" }`);
   * the handler's return value follows later as the final response on the same request id.
   */
  ack?(payload: unknown): void;
  /** The request's idempotencyKey (methods with `sideEffect`), for work that must be found again after a restart. */
  idempotencyKey?: string;
  [key: string]: unknown;
}

/**
 * What became of a request whose first attempt a restart cut short, as the method that
 * ran it knows: still running (`acks` to send again, then `result`, the final payload),
 * finished (`payload`), or never accepted (nothing of it took effect: safe to send again).
 */
export type RecoveredRequest =
  | { state: 'pending'; acks?: unknown[]; result: Promise<unknown> }
  | { state: 'done'; payload: unknown }
  | { state: 'not-accepted' };

export interface GatewayMethodDefinition<Params = any> {
  params?: JsonSchema;
  scope?: string;
  sideEffect?: boolean | 'optional';
  description?: string;
  handler(params: Params, ctx: GatewayMethodContext): unknown;
  /**
   * A retry (same idempotencyKey, same params) of a request a restart cut short: say what
   * became of it. Without this, the retry is told its outcome is unknown and that it is
   * not run again.
   */
  recover?(
    params: Params,
    ctx: GatewayMethodContext & { idempotencyKey: string; acks: unknown[] },
  ): RecoveredRequest | Promise<RecoveredRequest>;
}

export interface CommandContext {
  args: string;
  sessionKey?: string;
  channel?: string;
  senderId?: string;
}

export interface CommandDefinition {
  /** Without the leading "/". */
  name: string;
  description: string;
  acceptsArgs?: boolean;
  handler(ctx: CommandContext): { text?: string } | void | Promise<{ text?: string } | void>;
}

export interface HttpRouteDefinition {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | '*';
  /** Exact path, or a prefix ending in `/*`. Must fall under a manifest `httpRoutes` prefix. */
  path: string;
  /** `gateway` (default) puts the route behind gateway auth. */
  auth?: 'gateway' | 'none';
  /** Also take form bodies (`application/x-www-form-urlencoded`): for platforms that post forms, with `auth: 'none'` only. */
  formBodies?: boolean;
  handler(req: IncomingMessage, res: ServerResponse): void | Promise<void>;
}

/** The api of a service that approves tool calls (a tool names it in `approval()`; claw's policy asks it last). */
export interface ToolApprover {
  authorize(
    request: Record<string, unknown>,
    context: ToolContext & { toolName: string },
  ): Promise<{ allowed: boolean; reason?: string }>;
}
