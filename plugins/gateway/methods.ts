/**
 * The gateway's own read methods: health, status, presence, its identity and its log. Each
 * declares its params schema and the operator scope it needs. config.* and plugins.* are in
 * config-methods.ts, device pairing in device-methods.ts; methods of other plugins arrive
 * the same way through the registry.
 */
import type { JsonSchema, PluginApi } from '../../sdk/index.js';
import { defaultAgentId } from '../../sdk/agent/index.js';
import { readModelStatus } from './model-status.js';
import { openclawHealthFields, openclawStatusFields } from './openclaw-health.js';
import { channelSummaryLines, withOpenClawLogFields } from './openclaw-shapes.js';
import type { GatewayRuntime } from './runtime.js';
import { tailLog } from './tail.js';

const EMPTY: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };

export function registerMethods(api: PluginApi, runtime: GatewayRuntime): void {
  const kernel = api.kernel;

  api.registerGatewayMethod('health', {
    // OpenClaw's clients ask for a probe; claw's snapshot is always read live.
    params: { type: 'object', additionalProperties: false, properties: { probe: { type: 'boolean' } } },
    description: 'Gateway health snapshot (any authenticated connection).',
    // Read fresh: the model may have been set up since the last snapshot.
    handler: async () => {
      const started = Date.now();
      const model = runtime.server ? await runtime.server.refreshModel() : await readModelStatus(kernel);
      const health = runtime.health();
      const failed = health.plugins?.failed ?? [];
      return {
        ...(await openclawHealthFields(kernel, defaultAgentId(kernel.config()), started)),
        ...health,
        plugins: { ...health.plugins, errors: failed, unavailable: [] },
        ...(model ? { model } : {}),
      };
    },
  });

  api.registerGatewayMethod('status', {
    params: { type: 'object', additionalProperties: false, properties: { includeChannelSummary: { type: 'boolean' } } },
    scope: 'operator.read',
    description:
      'Gateway summary: listener, connections, plugins, lanes (with includeChannelSummary: one line per channel account, as OpenClaw).',
    handler: async (params: { includeChannelSummary?: boolean }, ctx) => {
      const model = await readModelStatus(kernel);
      const status = {
        ...(await openclawStatusFields(kernel, runtime.version, defaultAgentId(kernel.config()))),
        ...runtime.status(ctx.scopes?.includes('operator.admin') ?? false),
        ...(model ? { model } : {}),
      };
      if (!params.includeChannelSummary) return status;
      return { ...status, channelSummary: channelSummaryLines(await kernel.channels.status()) };
    },
  });

  api.registerGatewayMethod('system-presence', {
    params: EMPTY,
    scope: 'operator.read',
    description: 'Connected (and recently disconnected) clients; the caller receives presence events from then on.',
    handler: (_params, ctx) => {
      if (ctx.connId) runtime.server?.wantPresence(ctx.connId);
      return runtime.server?.presence.snapshot() ?? [];
    },
  });

  api.registerGatewayMethod('gateway.identity.get', {
    params: EMPTY,
    scope: 'operator.read',
    description: "The gateway's own device identity.",
    handler: () => runtime.identity(),
  });

  api.registerGatewayMethod('logs.tail', {
    params: {
      type: 'object',
      additionalProperties: false,
      properties: {
        cursor: { type: 'integer', minimum: 0 },
        limit: { type: 'integer', minimum: 1, maximum: 5000 },
        maxBytes: { type: 'integer', minimum: 1024, maximum: 4194304 },
      },
    },
    scope: 'operator.read',
    description: 'Lines of the gateway log file after a cursor (or the last ones).',
    // Lines are masked when written; this also covers lines written before a secret was configured.
    handler: (params: { cursor?: number; limit?: number; maxBytes?: number }) => {
      const tail = tailLog(runtime.logFile, params);
      return kernel.redact.value({ ...tail, lines: tail.lines.map(withOpenClawLogFields) });
    },
  });
}
