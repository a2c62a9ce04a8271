/**
 * The agent plugin: where every message for an agent enters (gateway methods, channels,
 * `/v1`, `claw agent`) and where its reply leaves. It owns the queue, slash commands and
 * delivery, and offers them to other plugins as the `agent` service (AgentService in the
 * SDK). Sessions and models are their own plugins' services; the turn is the `agentLoop`
 * slot's.
 */
import { fileURLToPath } from 'node:url';
import {
  ensureWorkspace,
  type AgentService,
  type ModelService,
  type SessionService,
  type SkillsService,
} from '../../sdk/agent/index.js';
import type { MessagesSection } from './queue-settings.js';
import { requireService, useService } from '../../sdk/services.js';
import { definePlugin } from '../../sdk/index.js';
import { runAgentCli } from './cli.js';
import { USAGE_HELP, usageCli } from './usage-cli.js';
import { cliCommand } from '../../sdk/cli.js';
import { applyInlineDirectives, commandList, handleCommand } from './commands.js';
import { registerAgentMethods } from './methods.js';
import { registerAgentFileMethods } from './agent-files.js';
import { registerAgentConfigMethods } from './agents-config-methods.js';
import { registerAgentListMethods } from './agents-methods.js';
import { registerSessionRunMethods } from './session-methods.js';
import { registerMetadataChanges } from './metadata-changes.js';
import { registerSessionFileMethods } from './session-files.js';
import { registerSessionDiff } from './session-diff.js';
import { messageTool } from './message-tool.js';
import { AgentRuntime } from './runtime.js';

/** OpenClaw's drain budget for a stop or restart, 5 minutes: the default of `gateway.agentDrainMs` (gateway manifest). */
const AGENT_DRAIN_DEFAULT_MS = 300_000;

/** The files a new workspace starts with (`claw setup`, the first run). */
export const TEMPLATES_DIR = fileURLToPath(new URL('./templates/', import.meta.url));

export default definePlugin({
  id: 'agent',
  async register(api) {
    // Model selection and session stores are the models and sessions plugins' services, one per
    // process: cooldowns are shared, and two stores on one sessions.json would lose each other's writes.
    const models = await requireService<ModelService>(api.kernel, 'models', 'the agent plugin');
    const sessions = await requireService<SessionService>(api.kernel, 'sessions', 'the agent plugin');
    const runtime = new AgentRuntime(
      api.kernel,
      api.logger,
      () => {
        const config = api.kernel.config() as { messages?: MessagesSection };
        return { messages: config.messages };
      },
      // The skills plugin's list and commands, when it is on (without it an agent has no skills).
      await useService<SkillsService>(api.kernel, 'skills'),
      { handle: handleCommand, applyInline: applyInlineDirectives },
      models,
      sessions,
    );

    registerAgentMethods(api, runtime);
    registerAgentListMethods(api, sessions);
    registerAgentConfigMethods(api);
    registerAgentFileMethods(api);
    registerSessionRunMethods(api, runtime);
    registerMetadataChanges(api);
    registerSessionFileMethods(api, runtime);
    registerSessionDiff(api, runtime);
    api.registerTool(messageTool(runtime));

    for (const [name, description] of [
      ['agent', 'Send a message to an agent and stream the answer'],
      ['setup', 'Create the config and the agent workspace'],
    ] as const) {
      api.registerCli({
        name,
        description,
        run: (argv, ctx) => runAgentCli(name, argv, ctx, api, runtime, TEMPLATES_DIR),
      });
    }

    api.registerCli({
      name: 'usage',
      description: 'Tokens and cost of past runs from the usage ledger',
      run: cliCommand(USAGE_HELP, (argv, ctx) => usageCli(argv, ctx, api.kernel.paths.stateDir)),
    });

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
      drain: (timeoutMs) =>
        runtime.drainTurns(
          timeoutMs ??
            (api.kernel.config().gateway as { agentDrainMs?: number } | undefined)?.agentDrainMs ??
            AGENT_DRAIN_DEFAULT_MS,
        ),
      stop: (sessionKey, reason) => runtime.stop(sessionKey, reason),
      defaultAgent: () => runtime.defaultAgent(),
      isActive: (sessionKey) => runtime.isActive(sessionKey),
      commands: (agentId) => commandList(runtime, agentId ?? runtime.defaultAgent()),
      resetSession: (agentId, sessionKey, patch) => runtime.resetSession(agentId, sessionKey, patch),
      compactSession: (agentId, sessionKey, instructions) => runtime.compactSession(agentId, sessionKey, instructions),
      request: (requestKey) => runtime.request(requestKey),
      deliveryStatus: () => runtime.deliveryStatus(),
      seedWorkspace: (dir) => ensureWorkspace(dir, TEMPLATES_DIR),
      sessionChanged(sessionKey, entry) {
        if (entry) runtime.cachedQueueOverride.set(sessionKey, entry.queue);
        else runtime.cachedQueueOverride.delete(sessionKey);
      },
    };
    api.registerService({
      id: 'agent',
      api: service,
      // Only the gateway starts services: it alone journals what it accepts and resumes it.
      start() {
        void runtime
          .openIntake()
          .catch((error: Error) => api.logger.error(`resuming interrupted runs failed: ${error.message}`));
      },
      async stop() {
        await runtime.shutdown();
      },
    });
  },
});
