/**
 * A real gateway with the agent loop, both HTTP model providers and the core tools, talking
 * to the fake LLM server; plus a plugin that records every hook as it fires and a tool
 * whose completion the test controls (to send messages while a run is mid-tool).
 */
import { join } from 'node:path';
import { definePlugin, textResult, type PluginDefinition } from '../sdk/index.js';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import type { EventFrame } from '../sdk/generated/protocol.js';
import type { HookName } from '../kernel/index.js';
import { HOOK_NAMES } from '../kernel/index.js';
import { startFakeLlm, type FakeLlm, type FakeLlmOptions } from './fakes/llm-server.js';
import { client, startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO } from './helpers.js';
import { AGENT_STACK } from '../sdk/testing.js';

export const AGENT_PLUGINS = [
  ...AGENT_STACK,
  'openai-http',
  'openai',
  'anthropic',
  'tools-fs',
  'tools-exec',
  'exec-approvals',
].map((id) => join(REPO, 'plugins', id));

export const MODELS = { openai: 'openai/gpt-4.1', anthropic: 'anthropic/claude-sonnet-4-5' } as const;

/** A tool that waits until the test opens it (or the run is aborted). */
export class Gate {
  private release!: () => void;
  private opened!: Promise<void>;
  private enteredResolve!: () => void;
  /** Resolves when a run is inside the tool. */
  entered!: Promise<void>;
  calls = 0;

  constructor() {
    this.reset();
  }

  reset(): void {
    this.opened = new Promise((resolve) => (this.release = resolve));
    this.entered = new Promise((resolve) => (this.enteredResolve = resolve));
  }

  open(): void {
    this.release();
  }

  async wait(signal: AbortSignal | undefined): Promise<'opened' | 'aborted'> {
    this.calls++;
    this.enteredResolve();
    if (signal?.aborted) return 'aborted';
    return Promise.race([
      this.opened.then(() => 'opened' as const),
      new Promise<'aborted'>((resolve) => signal?.addEventListener('abort', () => resolve('aborted'), { once: true })),
    ]);
  }
}

export interface HookRecord {
  hook: HookName;
  /** For before_message_write: the role of the message (and "delivery" for the reply sent). */
  detail?: string;
}

export interface AgentHarness {
  fake: FakeLlm;
  gw: RunningGateway;
  client: GatewayClient;
  events: EventFrame[];
  hooks: HookRecord[];
  gate: Gate;
  workspace: string;
  stop(): Promise<void>;
}

export interface AgentHarnessOptions {
  provider?: keyof typeof MODELS;
  config?: Record<string, any>;
  fake?: FakeLlmOptions;
  gateway?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
  /** Leave the API key out of config (auth-profile tests write their own). */
  noConfigKey?: boolean;
  /** Defaults to a fresh temporary directory. */
  stateDir?: string;
  /** More plugins beside the agent plugins and the recorder. */
  plugins?: Array<PluginDefinition | string>;
}

export function deepMerge(base: Record<string, any>, extra: Record<string, any>): Record<string, any> {
  const out = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    out[key] =
      value && typeof value === 'object' && !Array.isArray(value) && base[key] && typeof base[key] === 'object'
        ? deepMerge(base[key], value)
        : value;
  }
  return out;
}

export async function startAgent(options: AgentHarnessOptions = {}): Promise<AgentHarness> {
  const fake = await startFakeLlm(options.fake);
  const hooks: HookRecord[] = [];
  const gate = new Gate();
  const recorder = definePlugin({
    id: 'test-recorder',
    register(api) {
      for (const hook of HOOK_NAMES) {
        api.on(
          hook as HookName,
          ((event: { message?: { role?: string; delivery?: unknown } }) => {
            const detail =
              hook === 'before_message_write'
                ? event.message?.delivery
                  ? 'delivery'
                  : event.message?.role
                : undefined;
            hooks.push({ hook: hook as HookName, ...(detail ? { detail } : {}) });
            return undefined;
          }) as never,
        );
      }
      api.registerTool({
        name: 'wait_gate',
        description: 'Waits until the test lets it finish.',
        parameters: { type: 'object', properties: {}, additionalProperties: false },
        execute: async (_params, ctx) =>
          textResult((await gate.wait(ctx.signal)) === 'opened' ? 'gate opened' : 'gate aborted'),
      });
    },
  });
  const provider = options.provider ?? 'openai';
  const key = options.noConfigKey ? {} : { apiKey: provider === 'openai' ? 'sk-test' : 'sk-ant-test' };
  const config = deepMerge(
    {
      agents: { defaults: { model: MODELS[provider] } },
      models: {
        providers: {
          openai: { baseUrl: fake.openaiBaseUrl, ...(provider === 'openai' ? key : {}) },
          anthropic: { baseUrl: fake.anthropicBaseUrl, ...(provider === 'anthropic' ? key : {}) },
        },
      },
      messages: { queue: { debounceMs: 20 } },
    },
    options.config ?? {},
  );
  const gw = await startGateway({
    plugins: [...AGENT_PLUGINS, recorder, ...(options.plugins ?? [])],
    config,
    gateway: options.gateway,
    env: options.env,
    stateDir: options.stateDir,
  });
  const events: EventFrame[] = [];
  const operator = await client(gw.url, {
    onEvent: (frame) => events.push(frame),
    ...(options.gateway?.auth ? { token: (options.gateway.auth as { token?: string }).token } : {}),
  });
  return {
    fake,
    gw,
    client: operator,
    events,
    hooks,
    gate,
    workspace: join(gw.stateDir, 'workspace'),
    async stop() {
      gate.open();
      await operator.close();
      await gw.stop();
      await fake.close();
    },
  };
}

let keyCounter = 0;
export function idem(): string {
  return `test-${process.pid}-${++keyCounter}`;
}

/** `agent` with both phases: the ack and the final result. */
export async function runAgent(
  operator: GatewayClient,
  params: Record<string, unknown>,
  onAck?: (ack: { runId: string; status: string; disposition?: string }) => void,
): Promise<{ ack: { runId: string; status: string; acceptedAt: number; disposition?: string }; final: any }> {
  let ack: any;
  const final = await operator.request(
    'agent',
    { idempotencyKey: idem(), ...params },
    { expectFinal: true, timeoutMs: 20_000, onAck: (payload) => ((ack = payload), onAck?.(ack)) },
  );
  return { ack, final };
}

export function agentEvents(events: EventFrame[], runId: string): Array<{ stream: string; data: any; seq: number }> {
  return events
    .filter((frame) => frame.event === 'agent' && (frame.payload as any).runId === runId)
    .map((frame) => frame.payload as any);
}

export async function until(check: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
