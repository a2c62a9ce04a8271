/**
 * Test kit: boot a kernel in-process with exactly the plugins a test names — objects
 * (`definePlugin(...)`) or plugin directories — and nothing else. Zero plugins is fine.
 *
 *   const kernel = await createTestKernel({ plugins: [myPlugin] });
 *   const result = await kernel.runTool('hello', { name: 'Ada' });
 *   await kernel.dispose();
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
// The test kit boots a kernel as claw does, so it is the one SDK module that uses the host.
import { clawKernelParts } from '../host/kernel-options.js';
import { createKernel, type KernelPolicy, type Logger, type ToolContext, type ToolResult } from '../kernel/index.js';
import { createLogger, type LogRecord } from './logger.js';
import type { Kernel, PluginDefinition } from './types/plugin.js';
import type { ModelRequest, ModelStreamEvent } from './types/models.js';
import { definePlugin } from './index.js';

/**
 * The folder of a bundled plugin: `<package>/plugins/<id>` next to this SDK — the sources
 * when the SDK runs from source, the prebuilt `dist/plugins/<id>` when it runs from dist.
 */
export function bundledPluginDir(id: string): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', 'plugins', id);
}

/**
 * The bundled plugins a test needs for an agent to answer a message, by id: the channel
 * machinery (inbound pipeline, outbound path), model selection, session stores, the agent
 * (dispatcher, commands) and the agent loop (the turn). Add a model provider
 * (`scriptedModel`) and the channel under test.
 */
export const AGENT_STACK: readonly string[] = ['channels', 'models', 'sessions', 'agent', 'agent-loop'];

/** The AGENT_STACK plugins' folders, for `createTestKernel({ plugins: [...agentStackDirs(), …] })`. */
export function agentStackDirs(): string[] {
  return AGENT_STACK.map(bundledPluginDir);
}

export interface TestKernelOptions {
  /** Plugin objects, or paths of plugin directories (with openclaw.plugin.json). */
  plugins?: ReadonlyArray<PluginDefinition | string>;
  /** openclaw.json content; nothing is read from disk. */
  config?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
  /** Defaults to a fresh temporary directory, removed by `dispose()`. */
  stateDir?: string;
  /** Defaults to a logger that records into `kernel.logs`. */
  logger?: Logger;
  /** Rules that replace claw's own (the host's `clawPolicy`) at the kernel's choke points, one by one. */
  policy?: Partial<KernelPolicy>;
}

export interface TestKernel extends Kernel {
  readonly stateDir: string;
  /** Everything logged at debug level and above (unless a logger was passed). */
  readonly logs: LogRecord[];
  /**
   * Run a tool the only way tools run: through the kernel's choke point (policy, hooks, params
   * check, masking). Returns the result the model would see.
   */
  runTool(
    name: string,
    params?: Record<string, unknown>,
    context?: Omit<ToolContext, 'toolCallId'>,
  ): Promise<ToolResult>;
  /** Stop services and delete the temporary state dir. */
  dispose(): Promise<void>;
}

export async function createTestKernel(options: TestKernelOptions = {}): Promise<TestKernel> {
  const ownsStateDir = options.stateDir === undefined;
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), 'claw-test-'));
  const logs: LogRecord[] = [];
  const logger = options.logger ?? createLogger({ level: 'debug', sink: (record) => logs.push(record) });
  const plugins = options.plugins ?? [];
  // One lasting jiti folder for the whole test process: modules outlive each test's state dir.
  const parts = clawKernelParts({
    jitiCacheDir: join(tmpdir(), `claw-test-jiti-${process.getuid?.() ?? 'user'}`),
    // Exactly the plugins it was given: no roots searched, only these directories.
    roots: { config: false, workspace: false, bundled: false, global: false },
    pluginDirs: plugins.filter((plugin): plugin is string => typeof plugin === 'string'),
  });
  const kernel = await createKernel({
    env: options.env ?? {},
    config: options.config ?? {},
    stateDir,
    plugins: plugins.filter((plugin): plugin is PluginDefinition => typeof plugin !== 'string'),
    logger,
    ...parts,
    policy: { ...parts.policy, ...options.policy },
  });
  return {
    // The SDK's Kernel: the same object, its capabilities typed with the SDK's contracts.
    ...(kernel as Kernel),
    stateDir,
    logs,
    async runTool(name, params = {}, context = {}) {
      return (await kernel.plugins.kernelServices.tools.invoke({ name, params, toolCallId: `test-${name}`, context }))
        .result;
    },
    async dispose() {
      await kernel.stop();
      if (ownsStateDir) rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** What a scripted model answers: text, or tool calls (the loop runs them and asks again). */
export type ScriptedAnswer =
  string | { text?: string; toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }> };

/**
 * A model provider plugin (`scripted/<anything>`) that answers in-process, at once, from a
 * function of the request — for tests that need a whole agent turn but no HTTP.
 */
export function scriptedModel(
  respond: (request: ModelRequest) => ScriptedAnswer | Promise<ScriptedAnswer>,
): PluginDefinition {
  return definePlugin({
    id: 'scripted-model',
    register(api) {
      api.registerProvider({
        id: 'scripted',
        requiresKey: false,
        async *stream(request): AsyncGenerator<ModelStreamEvent> {
          const answer = await respond(request);
          const { text, toolCalls } = typeof answer === 'string' ? { text: answer, toolCalls: undefined } : answer;
          if (text) yield { type: 'text_delta', delta: text };
          for (const [index, call] of (toolCalls ?? []).entries())
            yield {
              type: 'tool_call',
              id: `call_${index}_${Date.now().toString(36)}`,
              name: call.name,
              arguments: call.arguments,
            };
          yield { type: 'done', stopReason: toolCalls?.length ? 'toolUse' : 'stop', usage: { input: 1, output: 1 } };
        },
      });
    },
  });
}

/** Resolves once `check()` holds (polled), or fails naming `what` after `timeoutMs`: wait for a signal, never sleep. */
export async function waitFor(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The text of the last user message of a model request. */
export function lastUserText(request: ModelRequest): string {
  const user = [...request.messages].reverse().find((message) => message.role === 'user');
  if (!user) return '';
  return typeof user.content === 'string'
    ? user.content
    : user.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
