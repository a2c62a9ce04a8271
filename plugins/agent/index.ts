/**
 * The agent plugin: where every message for an agent enters (gateway methods, channels,
 * `/v1`, `claw agent`) and where its reply leaves. It owns sessions, the queue, slash
 * commands and delivery, and offers them to other plugins as the `agent` service
 * (AgentService in the SDK). The turn itself is the `agentLoop` slot's.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ModelService, type AgentService, type MessagesSection, type SessionResetConfig } from '../../sdk/agent/index.js';
import { useService } from '../../sdk/services.js';
import { definePlugin } from '../../sdk/index.js';
import { runAgentCli } from './cli.js';
import { applyInlineDirectives, handleCommand } from './commands.js';
import { registerAgentMethods } from './methods.js';
import { messageTool } from './message-tool.js';
import { AgentRuntime } from './runtime.js';

/** Bundled skills: `skills/` at the repository (or package) root, from source or from dist/. */
function bundledSkillsDir(): string {
  for (const relative of ['../../skills/', '../../../skills/']) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(dir)) return dir;
  }
  return fileURLToPath(new URL('../../skills/', import.meta.url));
}

/** The files a new workspace starts with (`claw setup`, the first run). */
export const TEMPLATES_DIR = fileURLToPath(new URL('./templates/', import.meta.url));

export default definePlugin({
  id: 'agent',
  async register(api) {
    // The models plugin's service when it is on, so cooldowns are shared; else our own.
    const models = (await useService<ModelService>(api.kernel, 'models')) ?? new ModelService(api.kernel);
    const runtime = new AgentRuntime(
      api.kernel,
      api.logger,
      () => {
        const config = api.kernel.config() as { session?: SessionResetConfig & Record<string, unknown>; messages?: MessagesSection };
        return { session: config.session, messages: config.messages };
      },
      bundledSkillsDir(),
      { handle: handleCommand, applyInline: applyInlineDirectives },
      models,
    );

    registerAgentMethods(api, runtime);
    api.registerTool(messageTool(runtime));

    for (const [name, description] of [
      ['agent', 'Send a message to an agent and stream the answer'],
      ['sessions', 'List sessions'],
      ['setup', 'Create the config and the agent workspace'],
    ] as const) {
      api.registerCli({ name, description, run: (argv, ctx) => runAgentCli(name, argv, ctx, api, runtime, TEMPLATES_DIR) });
    }

    const service: AgentService & { runtime: AgentRuntime } = {
      runtime,
      dispatch: (input) => runtime.dispatch(input),
      async run(input, options = {}) {
        const handle = await runtime.dispatch(input);
        const onAbort = () => runtime.abortRun(handle.runId, 'aborted');
        options.signal?.addEventListener('abort', onAbort, { once: true });
        try {
          return await handle.done;
        } finally {
          options.signal?.removeEventListener('abort', onAbort);
        }
      },
      abortRun: (runId, reason) => runtime.abortRun(runId, reason),
      stop: (sessionKey, reason) => runtime.stop(sessionKey, reason),
      defaultAgent: () => runtime.defaultAgent(),
    };
    api.registerService({
      id: 'agent',
      api: service,
      stop() {
        runtime.shutdown();
      },
    });
  },
});
