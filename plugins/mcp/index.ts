/**
 * The mcp plugin: the MCP client runtime (runtime/), `claw mcp` and its gateway methods, and
 * `claw mcp serve`. Loading it is cheap: the MCP SDK is imported when a server first starts.
 */
import { definePlugin } from '../../sdk/index.js';
import { McpRuntime } from './runtime/manager.js';
import { registerMcpMethods } from './methods.js';

export type { McpRuntime } from './runtime/manager.js';

/** The service id under which the runtime is offered (only this plugin's own parts use it). */
export const MCP_SERVICE = 'mcp';

export default definePlugin({
  id: 'mcp',
  register(api) {
    const runtime = new McpRuntime(api);
    api.registerService({ id: MCP_SERVICE, api: runtime, stop: () => runtime.stop() });
    registerMcpMethods(api, () => runtime);
    api.registerCli({
      name: 'mcp',
      description: 'MCP servers: list, show, status, doctor, probe, add, set, configure, tools, unset, reload, serve',
      run: async (argv, ctx) => (await import('./cli.js')).mcpCommand(argv, ctx, api),
    });
    // A running gateway applies a config change (config.changed): servers whose entry changed or went retire now.
    api.kernel.protocol.onEmit((event) => {
      // After the emitter's turn: config.patch announces the write before the running config takes it.
      if (event.event === 'config.changed') setImmediate(() => runtime.retireChanged());
      return 0;
    });
    // A call that comes before any turn started its server (tools.invoke): start it now, so the
    // kernel finds the tool when this hook returns.
    api.on('before_tool_call', async (event, ctx) => {
      const { toolName } = event as { toolName?: string };
      if (typeof toolName === 'string' && runtime.notStarted(toolName))
        await runtime.ensure({ agentId: ctx.agentId, sessionKey: ctx.sessionKey });
      return undefined;
    });
    // Before the turn lists its tools: the servers this agent may use are connected and their tools registered.
    api.on('before_agent_start', async (event, ctx) => {
      const { provider, model } = event as { provider?: string; model?: string };
      await runtime.ensure({
        agentId: ctx.agentId,
        sessionKey: ctx.sessionKey,
        ...(provider && model ? { model: `${provider}/${model}` } : {}),
      });
      return undefined;
    });
  },
});
