/**
 * The agent's `canvas` tool, with OpenClaw's actions and parameter names: present, hide,
 * navigate, eval, snapshot. It sends `canvas.*` commands to a node through the gateway's
 * "nodes" service (so the gateway's command policy applies to every call) and runs through
 * the kernel's tool choke point like every tool.
 *
 * A page path (not a URL) names a file in the agent's `<workspace>/canvas/` folder; it is
 * sent to the node as a gateway-relative capability URL (/__openclaw__/canvas/<capability>/
 * <path>), which the node resolves against the gateway it is connected to.
 */
import { randomUUID } from 'node:crypto';
import {
  errorResult,
  jsonResult,
  NodeInvokeError,
  textResult,
  type NodeInfo,
  type NodeService,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from '../../sdk/index.js';
import { capabilityPath } from './capability.js';
import { CanvasPathError, resolveCanvasFile, safeSegments } from './files.js';

const ACTIONS = ['present', 'hide', 'navigate', 'eval', 'snapshot'] as const;
type Action = (typeof ACTIONS)[number];
const DEFAULT_TIMEOUT_MS = 30_000;

export interface CanvasParams {
  action: Action;
  node?: string;
  target?: string;
  url?: string;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  javaScript?: string;
  outputFormat?: 'png' | 'jpg' | 'jpeg';
  maxWidth?: number;
  quality?: number;
  timeoutMs?: number;
}

export interface CanvasToolDeps {
  nodes(): Promise<NodeService>;
  /** The calling agent's id (normalized). */
  agentId(ctx: ToolContext): string;
  folder(agentId: string): string;
  capability(agentId: string): string;
  /** Why the host is off, or undefined while it serves. */
  hostDisabled(): string | undefined;
}

class CanvasToolError extends Error {}

/** The node to send `command` to: the one named, else the only connected node that may run it. */
async function pickNode(nodes: NodeService, query: string | undefined, command: string): Promise<NodeInfo> {
  if (query) {
    const node = await nodes.resolve(query);
    if (!node.connected) throw new CanvasToolError(`node ${label(node)} is not connected`);
    if (!node.commands.includes(command)) throw new CanvasToolError(notAllowed(node, command));
    return node;
  }
  const connected = (await nodes.list()).filter((node) => node.connected);
  const able = connected.filter((node) => node.commands.includes(command));
  if (able.length === 1) return able[0]!;
  if (able.length > 1) {
    throw new CanvasToolError(
      `several connected nodes can run ${command}; pass node (one of: ${able.map(label).join(', ')})`,
    );
  }
  const declaring = connected.filter((node) => node.declaredCommands.includes(command));
  if (declaring.length) throw new CanvasToolError(notAllowed(declaring[0]!, command));
  throw new CanvasToolError(
    `no connected node has a canvas (${command})` +
      (connected.length ? `; connected: ${connected.map(label).join(', ')}` : '') +
      '. Open claw\'s web UI, go to Canvas and turn on "Use this tab as a canvas", or connect a node that has one.',
  );
}

function label(node: NodeInfo): string {
  return node.displayName ? `${node.displayName} (${node.nodeId})` : node.nodeId;
}

function notAllowed(node: NodeInfo, command: string): string {
  return node.declaredCommands.includes(command)
    ? `node ${label(node)} declares ${command} but may not run it yet: approve its command surface (claw nodes pending, then claw nodes approve <requestId>), or see gateway.nodes.commands`
    : `node ${label(node)} has no ${command} (its commands: ${node.commands.join(', ') || 'none'})`;
}

/** A page to show: an http(s) URL as given, or a file in the canvas folder as a capability URL. */
function pageUrl(raw: string, deps: CanvasToolDeps, agentId: string): string {
  const target = raw.trim();
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(target)?.[1]?.toLowerCase();
  if (scheme === 'http' || scheme === 'https') return target;
  if (scheme) throw new CanvasToolError(`"${target}": only http(s) URLs or paths in the canvas folder can be shown`);
  const off = deps.hostDisabled();
  if (off) throw new CanvasToolError(`cannot show ${target}: ${off}`);
  const cut = target.search(/[?#]/);
  const path = cut < 0 ? target : target.slice(0, cut);
  const suffix = cut < 0 ? '' : target.slice(cut);
  const folder = deps.folder(agentId);
  let segments = safeSegments(path, 'canvas path');
  // Models often name the file as they wrote it, relative to the workspace.
  if (segments[0] === 'canvas' && segments.length > 1) {
    try {
      resolveCanvasFile(folder, segments, true);
    } catch {
      segments = segments.slice(1);
    }
  }
  try {
    const found = resolveCanvasFile(folder, segments, true);
    return capabilityPath(deps.capability(agentId), found.relPath) + suffix;
  } catch (error) {
    if (error instanceof CanvasPathError) {
      throw new CanvasToolError(
        `${error.message}. Write the page under <workspace>/canvas/ (e.g. canvas/index.html) first, then present its path inside that folder.`,
      );
    }
    throw error;
  }
}

/** By name as well: the service may come from another copy of the SDK (a plugin loaded from elsewhere). */
function isNodeInvokeError(error: unknown): error is NodeInvokeError {
  return (
    error instanceof NodeInvokeError ||
    (error instanceof Error &&
      error.name === 'NodeInvokeError' &&
      typeof (error as { code?: unknown }).code === 'string')
  );
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function canvasTool(deps: CanvasToolDeps): ToolDefinition<CanvasParams> {
  return {
    name: 'canvas',
    label: 'Canvas',
    description:
      'Show and drive a canvas on a paired node (for example a claw web UI tab used as a canvas). Write HTML/CSS/JS under canvas/ in the workspace, then present its path (e.g. "index.html"); the page reloads by itself when files there change. navigate loads another page; eval runs JavaScript in the page and returns the result; snapshot returns a picture of it; hide hides the canvas.',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['action'],
      properties: {
        action: { type: 'string', enum: [...ACTIONS] },
        node: { type: 'string', description: 'Node id, name or IP (default: the only connected node with a canvas).' },
        target: { type: 'string', description: 'present: a path in the canvas folder or an http(s) URL.' },
        url: { type: 'string', description: 'navigate: a path in the canvas folder or an http(s) URL.' },
        x: { type: 'number' },
        y: { type: 'number' },
        width: { type: 'number' },
        height: { type: 'number' },
        javaScript: { type: 'string', description: 'eval: the code; the value of its last expression is returned.' },
        outputFormat: { type: 'string', enum: ['png', 'jpg', 'jpeg'], description: 'snapshot: image format (png).' },
        maxWidth: { type: 'integer', minimum: 1, description: 'snapshot: scale down to at most this width.' },
        quality: { type: 'number', minimum: 0, maximum: 1, description: 'snapshot: JPEG quality 0–1.' },
        timeoutMs: { type: 'integer', minimum: 1, description: 'How long the node has to answer (30000).' },
      },
    },
    async execute(params, ctx): Promise<ToolResult> {
      const agentId = deps.agentId(ctx);
      try {
        const invoke = async (command: string, invokeParams: unknown) => {
          const nodes = await deps.nodes();
          const node = await pickNode(nodes, params.node?.trim() || undefined, command);
          const payload = await nodes.invoke(node.nodeId, command, invokeParams, {
            timeoutMs: params.timeoutMs ?? DEFAULT_TIMEOUT_MS,
            idempotencyKey: randomUUID(),
            ...(ctx.sessionKey ? { sessionKey: ctx.sessionKey } : {}),
            ...(ctx.signal ? { signal: ctx.signal } : {}),
          });
          return { node: node.nodeId, payload: (payload ?? {}) as Record<string, unknown> };
        };
        switch (params.action) {
          case 'present': {
            const raw = params.target ?? params.url;
            const url = raw?.trim() ? pageUrl(raw, deps, agentId) : undefined;
            const placement = {
              x: finite(params.x),
              y: finite(params.y),
              width: finite(params.width),
              height: finite(params.height),
            };
            const placed = Object.values(placement).some((value) => value !== undefined);
            const { node } = await invoke('canvas.present', {
              ...(url ? { url } : {}),
              ...(placed ? { placement } : {}),
            });
            return jsonResult({ ok: true, node, ...(url ? { url } : {}) });
          }
          case 'hide': {
            const { node } = await invoke('canvas.hide', undefined);
            return jsonResult({ ok: true, node });
          }
          case 'navigate': {
            const raw = params.url ?? params.target;
            if (!raw?.trim())
              return errorResult('canvas navigate needs url (a path in the canvas folder or an http(s) URL)');
            const url = pageUrl(raw, deps, agentId);
            const { node } = await invoke('canvas.navigate', { url });
            return jsonResult({ ok: true, node, url });
          }
          case 'eval': {
            if (!params.javaScript?.trim())
              return errorResult('canvas eval needs javaScript (the code to run in the page)');
            const { node, payload } = await invoke('canvas.eval', { javaScript: params.javaScript });
            const result = typeof payload.result === 'string' ? payload.result : JSON.stringify(payload.result ?? null);
            return textResult(result, { ok: true, node, result });
          }
          case 'snapshot': {
            const format = params.outputFormat === 'jpg' || params.outputFormat === 'jpeg' ? 'jpeg' : 'png';
            const { node, payload } = await invoke('canvas.snapshot', {
              format,
              ...(params.maxWidth ? { maxWidth: params.maxWidth } : {}),
              ...(params.quality !== undefined ? { quality: params.quality } : {}),
            });
            const data = typeof payload.base64 === 'string' ? payload.base64 : '';
            if (!data) return errorResult(`node ${node} answered canvas.snapshot without an image`);
            const mimeType = payload.format === 'jpeg' || payload.format === 'jpg' ? 'image/jpeg' : 'image/png';
            const bytes = Math.floor((data.length * 3) / 4);
            return {
              content: [
                { type: 'text', text: `Canvas snapshot from node ${node} (${mimeType}, about ${bytes} bytes).` },
                { type: 'image', data, mimeType },
              ],
              details: { ok: true, node, format: mimeType === 'image/jpeg' ? 'jpeg' : 'png', bytes },
            };
          }
        }
        return errorResult(`unknown canvas action "${String(params.action)}" (actions: ${ACTIONS.join(', ')})`);
      } catch (error) {
        if (error instanceof CanvasToolError || error instanceof CanvasPathError) return errorResult(error.message);
        if (isNodeInvokeError(error)) {
          return errorResult(`canvas ${params.action} failed: ${error.message} [${error.code}]`, {
            code: error.code,
            nodeId: error.nodeId,
          });
        }
        throw error;
      }
    },
  };
}
