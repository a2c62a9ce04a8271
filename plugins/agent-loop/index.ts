/**
 * The agent loop: holds the `agentLoop` slot. Everything that makes claw an assistant runs
 * through the AgentRuntime created here — gateway methods (`agent`, `chat.*`, `sessions.*`),
 * the OpenAI-compatible HTTP endpoint, `claw agent`, and channels (through the slot's
 * `dispatch`). Another plugin can take the slot and replace all of it.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AgentLoop, AgentRunRequest, ThinkingLevel } from '../../kernel/index.js';
import { definePlugin } from '../../sdk/index.js';
import { runAgentCli } from './cli.js';
import { registerAgentMethods } from './methods.js';
import { messageTool } from './message-tool.js';
import { createChatCompletionsHandler } from './openai-http.js';
import { AgentRuntime, type DispatchInput, type RunHandle } from './runtime.js';
import type { SessionResetConfig } from './sessions/reset.js';
import type { MessagesSection } from './settings.js';

/** What the `agentLoop` slot holds: `run` for one-shot callers, `dispatch` for channels. */
export interface AgentLoopSlot extends AgentLoop {
  dispatch(input: DispatchInput): Promise<RunHandle>;
  runtime: AgentRuntime;
}

/** Bundled skills: `skills/` at the repository (or package) root, from source or from dist/. */
function bundledSkillsDir(): string {
  for (const relative of ['../../skills/', '../../../skills/']) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(dir)) return dir;
  }
  return fileURLToPath(new URL('../../skills/', import.meta.url));
}

export default definePlugin({
  id: 'agent-loop',
  register(api) {
    const runtime = new AgentRuntime(
      api.kernel,
      api.logger,
      () => {
        const config = api.kernel.config() as { session?: SessionResetConfig & Record<string, unknown>; messages?: MessagesSection };
        return { session: config.session, messages: config.messages };
      },
      bundledSkillsDir(),
    );

    registerAgentMethods(api, runtime);
    api.registerTool(messageTool(runtime));

    const slot: AgentLoopSlot = {
      runtime,
      dispatch: (input) => runtime.dispatch(input),
      async run(request: AgentRunRequest) {
        const handle = await runtime.dispatch({
          agentId: request.agentId,
          sessionKey: request.sessionKey,
          message: request.message,
          thinking: request.thinking as ThinkingLevel | undefined,
          authorized: request.authorized !== false,
        });
        const onAbort = () => runtime.abortRun(handle.runId, 'aborted');
        request.signal?.addEventListener('abort', onAbort, { once: true });
        try {
          const result = await handle.done;
          return { ...result, text: result.text };
        } finally {
          request.signal?.removeEventListener('abort', onAbort);
        }
      },
    };
    api.registerAgentLoop(slot);

    // Off unless the owner turns it on (OpenClaw's key): an HTTP endpoint that runs the agent
    // is one more way in, so it must be asked for.
    const endpoints = (api.kernel.config().gateway as { http?: { endpoints?: { chatCompletions?: { enabled?: boolean } } } } | undefined)?.http?.endpoints;
    api.registerHttpRoute({ method: 'POST', path: '/v1/chat/completions', handler: createChatCompletionsHandler(runtime, endpoints?.chatCompletions?.enabled === true) });

    for (const [name, description] of [
      ['agent', 'Send a message to an agent and stream the answer'],
      ['models', 'List models and show provider auth status'],
      ['sessions', 'List sessions'],
      ['setup', 'Create the config and the agent workspace'],
    ] as const) {
      api.registerCli({ name, description, run: (argv, ctx) => runAgentCli(name, argv, ctx, api, runtime) });
    }

    api.registerService({
      id: 'agent-loop',
      start() {},
      stop() {
        runtime.shutdown();
      },
    });
  },
});
