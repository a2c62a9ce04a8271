/**
 * Sub-agents (issue 15 parts 4–5): the `sessions_spawn` and `subagents` tools, the
 * `/subagents` command and the `subagents` service (the run registry and OpenClaw's
 * sub-agent hooks, `on(hook, handler)`). Started with the gateway so runs a restart cut off
 * are reported to their requesters and finished ones are archived.
 */
import { definePlugin } from '../../sdk/index.js';
import { subagentsCommand } from './command.js';
import { SubagentService } from './service.js';
import { subagentLaneCap } from './settings.js';
import { spawnTool, subagentsTool } from './tools.js';

export default definePlugin({
  id: 'subagents',
  register(api) {
    // Only sub-agent runs use the `subagent` lane, so its cap is this plugin's to set.
    const cap = subagentLaneCap(api.kernel.config());
    if (cap !== undefined) api.kernel.lanes.setConcurrency('subagent', cap);
    let service: SubagentService | undefined;
    const subagents = (): SubagentService => (service ??= new SubagentService(api));
    api.registerTool(spawnTool(subagents));
    api.registerTool(subagentsTool(subagents));
    api.registerCommand(subagentsCommand(api, subagents));
    api.registerService({
      id: 'subagents',
      api: {
        get service() {
          return subagents();
        },
        on: (...args: Parameters<SubagentService['hooks']['on']>) => subagents().hooks.on(...args),
      },
      start: () => subagents().restore(),
      stop: () => service?.stop(),
    });
  },
});
