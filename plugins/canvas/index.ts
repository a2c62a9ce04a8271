/**
 * Canvas: the canvas host on the gateway's HTTP server (each agent's `<workspace>/canvas/`
 * folder at /__openclaw__/canvas/<capability>/…, with live reload) and the agent's `canvas`
 * tool, which shows those pages on a node (a phone or desktop app, or claw's web UI tab
 * turned into a canvas) through the gateway's "nodes" service.
 *
 * Light on purpose: nothing loads at start-up; the first canvas request or tool call loads it.
 * Reload watchers live only while a page listens: the gateway's shutdown closes every HTTP
 * connection, and with the last listener of a folder its watcher goes.
 */
import { defaultAgentId } from '../../sdk/agent/index.js';
import { definePlugin, normalizeAgentId, NODES_SERVICE, type NodeService } from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import { CANVAS_PATH, loadCanvasSecret, mintCapability } from './capability.js';
import { canvasDir, ensureCanvasDir } from './files.js';
import { handleCanvasRequest } from './host.js';
import { LiveReload } from './live-reload.js';
import { canvasTool } from './tool.js';

export interface CanvasConfig {
  host?: { enabled?: boolean; capabilityTtlMinutes?: number };
}

const DEFAULT_TTL_MINUTES = 60;

export default definePlugin<CanvasConfig>({
  id: 'canvas',
  register(api) {
    const reload = new LiveReload();
    let secret: Buffer | undefined;
    const getSecret = () => (secret ??= loadCanvasSecret(api.kernel.paths.stateDir));
    const folder = (agentId: string) => canvasDir(api.kernel.config(), agentId, api.kernel.paths);
    const disabled = () =>
      api.config.host?.enabled === false
        ? 'the canvas host is off (plugins.entries.canvas.config.host.enabled is false)'
        : undefined;
    const ttlMs = () => (api.config.host?.capabilityTtlMinutes ?? DEFAULT_TTL_MINUTES) * 60_000;

    api.registerHttpRoute({
      method: 'GET',
      path: `${CANVAS_PATH}/*`,
      // The capability in the URL is the credential: nodes load pages without headers.
      auth: 'none',
      handler: (req, res) =>
        handleCanvasRequest(req, res, {
          secret: getSecret,
          folder,
          ensureFolder: (agentId) => ensureCanvasDir(folder(agentId)),
          disabled,
          reload,
        }),
    });

    api.registerTool(
      canvasTool({
        nodes: () => requireService<NodeService>(api.kernel, NODES_SERVICE, 'the canvas tool'),
        agentId: (ctx) => normalizeAgentId(ctx.agentId ?? defaultAgentId(api.kernel.config())),
        folder: (agentId) => {
          const dir = folder(agentId);
          // The folder is the agent's to fill; make it (owner-only) so the agent finds it.
          ensureCanvasDir(dir);
          return dir;
        },
        capability: (agentId) => mintCapability(getSecret(), agentId, ttlMs()),
        hostDisabled: disabled,
      }),
    );
  },
});
