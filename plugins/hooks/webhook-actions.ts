/**
 * What a webhook request asks for, checked against the owner's policy and carried out:
 * `wake` queues a system event for the agent's main session and asks for a heartbeat (the
 * heartbeat plugin's `system-events` service); `agent` runs the agent in its own session
 * through the agent service, like any other message, with the payload fenced as external
 * content. Answers come back as `{ status, body }` for the HTTP layer.
 */
import { randomUUID } from 'node:crypto';
import {
  IntakeClosedError,
  normalizeAgentId,
  unknownAgentProblem,
  type AgentService,
  type DispatchInput,
  type RunResult,
} from '../../sdk/agent/index.js';
import {
  type KernelConfig,
  type KernelServices,
  type Logger,
  type SystemEventsService,
  type ThinkingLevel,
  type WakeMode,
  wrapExternalContent,
} from '../../sdk/index.js';
import { useService } from '../../sdk/services.js';
import { agentAllowed, sessionKeyAllowed, type WebhookSettings } from './settings.js';

export interface ActionReply {
  status: number;
  body: Record<string, unknown>;
}

export class HookRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const bad = (message: string) => new HookRequestError(400, message);
const WAKE_MODES = new Set<WakeMode>(['now', 'next-heartbeat']);
const THINKING = new Set(['off', 'minimal', 'low', 'medium', 'high']);

export interface WakeAction {
  text: string;
  mode: WakeMode;
  agentId?: string;
  sessionKey?: string;
  /** The key came from the caller (request body or a templated mapping key). */
  callerKey: boolean;
  source: string;
}

export interface AgentAction {
  message: string;
  name: string;
  agentId?: string;
  sessionKey?: string;
  callerKey: boolean;
  wakeMode: WakeMode;
  deliver: boolean;
  channel?: string;
  to?: string;
  model?: string;
  thinking?: string;
  timeoutSeconds?: number;
  /** Leave the payload unwrapped (mapping `allowUnsafeExternalContent`). */
  unsafe?: boolean;
  source: string;
}

export interface ActionDeps {
  kernel: KernelServices;
  logger: Logger;
  settings: WebhookSettings;
  config: KernelConfig;
}

// ── Field checks for the direct endpoints ───────────────────────────────────────

export function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw bad(`${key} must be a string`);
  return value.trim() || undefined;
}

export function wakeModeOf(value: unknown, key: string): WakeMode {
  if (value === undefined || value === null) return 'now';
  if (typeof value !== 'string' || !WAKE_MODES.has(value as WakeMode))
    throw bad(`${key} must be "now" or "next-heartbeat"`);
  return value as WakeMode;
}

const WAKE_FIELDS = ['text', 'mode', 'agentId', 'sessionKey'];
const AGENT_FIELDS = [
  'message',
  'name',
  'agentId',
  'sessionKey',
  'wakeMode',
  'deliver',
  'channel',
  'to',
  'model',
  'thinking',
  'timeoutSeconds',
];

/** A field claw does not act on is refused rather than silently dropped. */
function onlyFields(body: Record<string, unknown>, allowed: readonly string[], endpoint: string): void {
  const unknown = Object.keys(body).filter((key) => !allowed.includes(key));
  if (unknown.length)
    throw bad(
      `${endpoint} does not take ${unknown.map((key) => `"${key}"`).join(', ')}; its fields are ${allowed.join(', ')}`,
    );
}

export function parseWakeBody(body: Record<string, unknown>): WakeAction {
  onlyFields(body, WAKE_FIELDS, '/wake');
  const text = optionalString(body, 'text');
  if (!text) throw bad('text is required: a non-empty string');
  const sessionKey = optionalString(body, 'sessionKey');
  return {
    text,
    mode: wakeModeOf(body.mode, 'mode'),
    agentId: optionalString(body, 'agentId'),
    sessionKey,
    callerKey: sessionKey !== undefined,
    source: 'hook:wake',
  };
}

export function parseAgentBody(body: Record<string, unknown>): AgentAction {
  onlyFields(body, AGENT_FIELDS, '/agent');
  const message = optionalString(body, 'message');
  if (!message) throw bad('message is required: a non-empty string');
  if (body.deliver !== undefined && typeof body.deliver !== 'boolean') throw bad('deliver must be true or false');
  let timeoutSeconds: number | undefined;
  if (body.timeoutSeconds !== undefined) {
    if (typeof body.timeoutSeconds !== 'number' || !Number.isFinite(body.timeoutSeconds) || body.timeoutSeconds < 1)
      throw bad('timeoutSeconds must be a number of seconds, at least 1');
    timeoutSeconds = Math.floor(body.timeoutSeconds);
  }
  const sessionKey = optionalString(body, 'sessionKey');
  return {
    message,
    name: optionalString(body, 'name') ?? 'Hook',
    agentId: optionalString(body, 'agentId'),
    sessionKey,
    callerKey: sessionKey !== undefined,
    wakeMode: wakeModeOf(body.wakeMode, 'wakeMode'),
    deliver: body.deliver !== false,
    channel: optionalString(body, 'channel'),
    to: optionalString(body, 'to'),
    model: optionalString(body, 'model'),
    thinking: optionalString(body, 'thinking'),
    timeoutSeconds,
    source: 'hook:agent',
  };
}

// ── Policy ──────────────────────────────────────────────────────────────────────

function resolveAgent(deps: ActionDeps, requested: string | undefined, fallback: string): string {
  if (requested !== undefined) {
    const problem = unknownAgentProblem(deps.config, requested);
    if (problem) throw bad(problem);
  }
  const agentId = normalizeAgentId(requested ?? fallback);
  if (!agentAllowed(deps.settings, agentId)) throw bad(`agent "${agentId}" is not in hooks.allowedAgentIds`);
  return agentId;
}

/**
 * The key a run or wake may use: an `agent:<id>:…` key is re-scoped to the agent the policy
 * admitted (a key must not smuggle in another agent), then checked against the prefixes;
 * a key the caller chose also needs `allowRequestSessionKey`.
 */
function admitKey(deps: ActionDeps, key: string, agentId: string, fromCaller: boolean, what = 'sessionKey'): string {
  if (fromCaller && !deps.settings.allowRequestSessionKey)
    throw bad('a caller-chosen sessionKey needs hooks.allowRequestSessionKey: true');
  const scoped = key.replace(/^agent:[^:]+:/i, `agent:${agentId}:`);
  if (!sessionKeyAllowed(deps.settings, scoped))
    throw bad(`${what} "${scoped}" does not start with any of hooks.allowedSessionKeyPrefixes`);
  return scoped;
}

// ── Wake ────────────────────────────────────────────────────────────────────────

export async function runWake(deps: ActionDeps, action: WakeAction): Promise<ActionReply> {
  const events = await useService<SystemEventsService>(deps.kernel, 'system-events');
  if (!events) {
    throw new HookRequestError(
      503,
      'POST /hooks/wake needs the "system-events" service, which the heartbeat plugin provides: enable it (claw plugins enable heartbeat) and restart the gateway',
    );
  }
  const agent = await useService<AgentService>(deps.kernel, 'agent');
  const agentId = resolveAgent(deps, action.agentId, agent?.defaultAgent() ?? 'main');
  let sessionKey: string | undefined;
  if (action.sessionKey !== undefined) {
    if (action.mode !== 'now')
      throw bad('a wake for a chosen sessionKey needs mode "now" (deferred wakes go to the main session)');
    sessionKey = admitKey(deps, action.sessionKey, agentId, action.callerKey);
  }
  await events.enqueue({ agentId, ...(sessionKey ? { sessionKey } : {}), text: action.text, source: action.source });
  await events.wake({ agentId, mode: action.mode, reason: action.source });
  return { status: 200, body: { ok: true, mode: action.mode, eventOutcome: 'queued' } };
}

// ── Agent ───────────────────────────────────────────────────────────────────────

/** A webhook run's own session when the request names none: a new one each time. */
export function hookSessionKey(id: string = randomUUID()): string {
  return `hook:${id.trim()}`;
}

async function checkChannel(deps: ActionDeps, channel: string): Promise<void> {
  if (channel === 'last') throw bad('channel "last" is not supported for webhooks: name the channel and give "to"');
  const known = deps.kernel.capabilities.list('channel').map((entry) => entry.name);
  if (!known.includes(channel))
    throw bad(
      `unknown channel "${channel}"${known.length ? `: the channels are ${known.join(', ')}` : ' (no channel plugin is enabled)'}`,
    );
}

/** Answers 202 with the runId once the agent service has the message on disk. */
export async function runAgentAction(deps: ActionDeps, action: AgentAction): Promise<ActionReply> {
  const agent = await useService<AgentService>(deps.kernel, 'agent');
  if (!agent) throw new HookRequestError(503, 'POST /hooks/agent needs the "agent" service: enable the agent plugin');
  const agentId = resolveAgent(deps, action.agentId, agent.defaultAgent());

  let sessionKey: string;
  if (action.sessionKey !== undefined) {
    sessionKey = admitKey(deps, action.sessionKey, agentId, action.callerKey);
  } else if (deps.settings.defaultSessionKey !== undefined) {
    sessionKey = admitKey(deps, deps.settings.defaultSessionKey, agentId, false, 'hooks.defaultSessionKey');
  } else {
    sessionKey = hookSessionKey();
    if (!sessionKeyAllowed(deps.settings, sessionKey))
      throw bad(
        'hooks.allowedSessionKeyPrefixes does not admit the generated "hook:" keys: add "hook:" or set hooks.defaultSessionKey',
      );
  }

  if (action.thinking !== undefined && !THINKING.has(action.thinking))
    throw bad(`thinking must be one of off, minimal, low, medium, high (got "${action.thinking}")`);
  let deliver: DispatchInput['deliver'];
  if (action.deliver && (action.channel !== undefined || action.to !== undefined)) {
    if (action.channel === undefined || action.to === undefined)
      throw bad('delivery needs both channel and to (or deliver: false)');
    await checkChannel(deps, action.channel);
    deliver = { channel: action.channel, to: action.to };
  }

  const message = action.unsafe
    ? action.message
    : wrapExternalContent(action.message, { kind: 'webhook', name: action.name });
  let handle;
  try {
    handle = await agent.dispatch({
      agentId,
      sessionKey,
      message,
      channel: 'webhook',
      from: action.source,
      // Payload text never runs slash commands.
      authorized: false,
      freshSession: true,
      ...(action.model ? { model: action.model } : {}),
      ...(action.thinking ? { thinking: action.thinking as ThinkingLevel } : {}),
      ...(action.timeoutSeconds ? { timeoutMs: action.timeoutSeconds * 1000 } : {}),
      ...(deliver ? { deliver } : {}),
    });
  } catch (error) {
    if (error instanceof IntakeClosedError)
      throw new HookRequestError(503, 'the gateway is shutting down; retry after it restarts');
    throw error;
  }
  void handle.done.then(
    (result) => afterRun(deps, action, agentId, deliver !== undefined, result),
    (error: Error) => deps.logger.warn(`hook agent run ${handle.runId} (${action.name}) failed: ${error.message}`),
  );
  return { status: 202, body: { ok: true, runId: handle.runId } };
}

/**
 * With `deliver` on and no destination, the outcome becomes a system event in the agent's
 * main session (woken per `wakeMode`); with `deliver: false` only failures do.
 */
async function afterRun(
  deps: ActionDeps,
  action: AgentAction,
  agentId: string,
  delivered: boolean,
  result: RunResult,
): Promise<void> {
  const ok = result.status === 'ok';
  const level = ok ? 'info' : 'warn';
  deps.logger[level](
    `hook agent run completed: runId=${result.runId} name=${action.name} status=${result.status}${result.error ? ` error=${result.error}` : ''}`,
  );
  if (delivered || (ok && !action.deliver) || (ok && !result.text.trim())) return;
  const events = await useService<SystemEventsService>(deps.kernel, 'system-events').catch(() => undefined);
  if (!events) {
    deps.logger.warn(
      `hook "${action.name}": no system-events service (heartbeat plugin) to report the run's outcome to the main session`,
    );
    return;
  }
  const text = ok
    ? `Hook ${action.name}: ${result.text.trim()}`
    : `Hook ${action.name} failed (${result.status}): ${result.error ?? 'no reply'}`;
  try {
    await events.enqueue({ agentId, text, source: `hook:${action.name}` });
    await events.wake({ agentId, mode: action.wakeMode, reason: `hook:${action.name}` });
  } catch (error) {
    deps.logger.warn(`hook "${action.name}": reporting the outcome failed: ${(error as Error).message}`);
  }
}
