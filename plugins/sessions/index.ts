/**
 * Sessions: the per-agent session stores and transcripts (SessionService, offered as
 * service "sessions" under the SDK's contract), the `sessions.*` methods and `claw sessions`. The agent plugin
 * keeps its runs in these stores; this plugin stays when the agent loop is swapped.
 */
import type { AgentService, ModelService } from '../../sdk/agent/index.js';
import { cliCommand } from '../../sdk/cli.js';
import { definePlugin } from '../../sdk/index.js';
import { requireService, useService } from '../../sdk/services.js';
import { sessionsCommand, SESSIONS_HELP } from './cli.js';
import { LIST_PARAMS, registerSessionMethods, type SessionsDeps } from './methods.js';
import { registerSessionSubscriptions } from './subscriptions.js';
import { registerUsageMethods } from './usage.js';
import { registerUsageDetailMethods } from './usage-detail.js';
import { registerSessionLookup } from './lookup.js';
import { registerAbsentSessionFeatures } from './absent-features.js';
import { registerBulkSessionMethods } from './bulk-methods.js';
import { registerBranchMethods } from './branches.js';
import { SessionService } from './service.js';

export default definePlugin({
  id: 'sessions',
  async register(api) {
    const sessions = new SessionService(api.kernel, { logger: api.logger });
    api.registerService({ id: 'sessions', api: sessions });
    const deps: SessionsDeps = {
      sessions,
      models: await requireService<ModelService>(api.kernel, 'models', 'the sessions plugin'),
      agent: () => useService<AgentService>(api.kernel, 'agent'),
    };
    registerSessionMethods(api, deps);
    deps.announceOperation = registerSessionSubscriptions(api, deps, LIST_PARAMS);
    registerUsageMethods(api, deps);
    registerUsageDetailMethods(api, deps);
    registerSessionLookup(api, deps);
    registerAbsentSessionFeatures(api, deps);
    registerBulkSessionMethods(api, deps);
    registerBranchMethods(api, deps);
    api.registerCli({
      name: 'sessions',
      description: 'List sessions; import them from OpenClaw (sessions import)',
      run: cliCommand(SESSIONS_HELP, (argv, ctx) => sessionsCommand(argv, ctx, deps, api.kernel.paths.stateDir)),
    });
  },
});
