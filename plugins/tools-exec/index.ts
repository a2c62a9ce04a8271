/**
 * The runtime tools: exec runs shell commands, process manages the ones left running in the
 * background. Sessions belong to this plugin instance and are killed when the kernel stops.
 */
import { definePlugin, type ToolContext } from '../../sdk/index.js';
import { createExecTool, type ExecConfig } from './exec-tool.js';
import { createProcessTool } from './process-tool.js';
import { SessionRegistry } from './registry.js';

interface ExecPluginConfig extends ExecConfig {
  finishedSessionTtlSeconds: number;
  maxFinishedSessions: number;
}

export default definePlugin<ExecPluginConfig>({
  id: 'tools-exec',
  register(api) {
    const config = api.config;
    const registry = new SessionRegistry({
      finishedTtlMs: config.finishedSessionTtlSeconds * 1000,
      maxFinished: config.maxFinishedSessions,
    });
    const workspace = (ctx: ToolContext) => ctx.workspaceDir ?? api.kernel.paths.workspaceDir;

    api.registerTool(createExecTool({ registry, config, workspace, capabilities: api.kernel.capabilities }));
    api.registerTool(createProcessTool(registry));
    api.registerService({
      id: 'tools-exec',
      start() {},
      stop: () => registry.stopAll(),
    });
  },
});
