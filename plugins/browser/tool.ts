/**
 * The agent's `browser` tool (OpenClaw's one tool with an `action`). It runs through the
 * kernel's tool choke point like every tool (policy: `browser` is in group:ui; hooks).
 *
 * Sandboxed sessions: there is no sandbox browser container here, so a sandboxed session
 * may drive the host's Chromium only when the owner allows it
 * (agents.defaults.sandbox.browser.allowHostControl, OpenClaw's key), and then it gets a
 * browser of its own (separate process and user data) whose SSRF policy ignores every
 * allow rule: public addresses only, so it never sees the host's loopback or LAN services
 * and none of the main sessions' pages or cookies.
 */
import { readFileSync } from 'node:fs';
import {
  errorResult,
  type KernelConfig,
  type SandboxRouter,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from '../../sdk/index.js';
import { ACT_KINDS, BrowserInputError } from './actions.js';
import { handleBrowserRequest, type BrowserRequest } from './routes.js';
import type { BrowserService, Caller } from './service.js';

const ACTIONS = [
  'status',
  'start',
  'stop',
  'profiles',
  'tabs',
  'open',
  'focus',
  'close',
  'navigate',
  'snapshot',
  'screenshot',
  'pdf',
  'act',
] as const;
type Action = (typeof ACTIONS)[number];

const ACT_FIELDS = {
  kind: { enum: [...ACT_KINDS] },
  ref: { type: 'string', description: 'Element ref from the last snapshot (e12).' },
  text: { type: 'string', description: 'type: the text; wait: text to appear.' },
  submit: { type: 'boolean', description: 'type: press Enter after.' },
  slowly: { type: 'boolean' },
  doubleClick: { type: 'boolean' },
  button: { enum: ['left', 'right', 'middle'] },
  key: { type: 'string', description: 'press: Enter, Escape, Control+A…' },
  values: { type: 'array', items: { type: 'string' }, description: 'select: option values or labels.' },
  fields: {
    type: 'array',
    items: {
      type: 'object',
      required: ['ref'],
      properties: { ref: { type: 'string' }, type: { type: 'string' }, value: {} },
    },
    description: 'fill: [{ref, value}].',
  },
  timeMs: { type: 'integer', minimum: 0 },
  textGone: { type: 'string' },
  selector: { type: 'string', description: 'wait: CSS selector to become visible.' },
  url: { type: 'string', description: 'wait: URL glob (**/done).' },
  loadState: { enum: ['load', 'domcontentloaded', 'networkidle'] },
  fn: { type: 'string', description: 'wait: JS predicate, e.g. window.ready===true.' },
  timeoutMs: { type: 'integer', minimum: 1 },
} as const;

interface BrowserParams extends Record<string, unknown> {
  action: Action;
  profile?: string;
  targetId?: string;
  request?: Record<string, unknown>;
}

/** The tool's action as a control route: the same code path `claw browser` takes. */
function toRequest(params: BrowserParams): BrowserRequest {
  const { action, profile, targetId, request, ...rest } = params;
  const body: Record<string, unknown> = { ...(profile ? { profile } : {}), ...(targetId ? { targetId } : {}) };
  switch (action) {
    case 'status':
      return { method: 'GET', path: '/', query: body };
    case 'start':
    case 'stop':
      return { method: 'POST', path: `/${action}`, body };
    case 'profiles':
      return { method: 'GET', path: '/profiles' };
    case 'tabs':
      return { method: 'GET', path: '/tabs', query: body };
    case 'open':
      return { method: 'POST', path: '/tabs/open', body: { ...body, url: rest.url, label: rest.label } };
    case 'focus':
      return { method: 'POST', path: '/tabs/focus', body };
    case 'close':
      if (!targetId) throw new BrowserInputError('close needs targetId (from tabs)');
      return { method: 'DELETE', path: `/tabs/${encodeURIComponent(targetId)}`, query: body };
    case 'navigate':
      return { method: 'POST', path: '/navigate', body: { ...body, url: rest.url } };
    case 'snapshot': {
      const { interactive, compact, depth, labels, selector, maxChars } = rest;
      return {
        method: 'GET',
        path: '/snapshot',
        query: { ...body, interactive, compact, depth, labels, selector, maxChars },
      };
    }
    case 'screenshot':
      return {
        method: 'POST',
        path: '/screenshot',
        body: { ...body, fullPage: rest.fullPage, ref: rest.ref, element: rest.element, type: rest.type },
      };
    case 'pdf':
      return { method: 'POST', path: '/pdf', body };
    case 'act':
      return { method: 'POST', path: '/act', body: { ...rest, ...(request ?? {}), ...body } };
  }
  throw new BrowserInputError(`unknown action "${String(action)}" (actions: ${ACTIONS.join(', ')})`);
}

function fileResult(result: Record<string, unknown>): ToolResult {
  const path = String(result.path);
  const content: ToolResult['content'] = [{ type: 'text', text: `MEDIA:${path}\n${JSON.stringify(result)}` }];
  if (typeof result.mimeType === 'string' && result.mimeType.startsWith('image/')) {
    content.push({ type: 'image', data: readFileSync(path).toString('base64'), mimeType: result.mimeType });
  }
  return { content, details: result };
}

function snapshotResult(result: Record<string, unknown>): ToolResult {
  const labels = result.labels as { path: string } | undefined;
  const head = `[tab ${String(result.targetId)}] ${String(result.title ?? '')} ${String(result.url)}\n`;
  const tail = labels ? `\nMEDIA:${labels.path}` : '';
  return {
    content: [{ type: 'text', text: `${head}${String(result.snapshot)}${tail}` }],
    details: { ...result, snapshot: undefined },
  };
}

type AnyRecord = Record<string, any>;

/** Whether the caller is a sandboxed session, and whether the owner lets it use the host browser. */
export function sandboxAccess(
  router: SandboxRouter,
  config: KernelConfig,
  ctx: Pick<ToolContext, 'agentId' | 'sessionKey' | 'workspaceDir'>,
  stateDir: string,
): { sandboxed: boolean; allowed: boolean } {
  const route = router.route(config, {
    agentId: ctx.agentId,
    sessionKey: ctx.sessionKey,
    workspaceDir: ctx.workspaceDir ?? '',
    stateDir,
  });
  if (!route.sandboxed) return { sandboxed: false, allowed: true };
  const agents = (config.agents ?? {}) as AnyRecord;
  const own = ((agents.list ?? []) as AnyRecord[]).find((agent) => agent.id === route.agentId)?.sandbox?.browser
    ?.allowHostControl;
  return { sandboxed: true, allowed: (own ?? agents.defaults?.sandbox?.browser?.allowHostControl) === true };
}

export function browserTool(
  service: BrowserService,
  config: () => KernelConfig,
  stateDir: string,
  /** The host's "sandbox-route" service: whether the calling session is sandboxed. */
  router: () => Promise<SandboxRouter>,
): ToolDefinition<BrowserParams> {
  return {
    name: 'browser',
    label: 'Browser',
    description:
      'Drive a real browser. Typical loop: navigate or open a URL, snapshot (interactive: true for just the controls) to get element refs such as e12, then act with {kind: click|type|fill|press|hover|select|wait, ref, …}, and snapshot again (refs change after navigation; navigate already returns the new interactive snapshot). screenshot and pdf save a file and return its path (MEDIA:<path>; reply with [[media:<path>]] to send it). Private and loopback addresses are blocked unless the owner trusts them.',
    parameters: {
      type: 'object',
      required: ['action'],
      properties: {
        action: { enum: [...ACTIONS] },
        profile: { type: 'string', description: 'Browser profile (default browser.defaultProfile).' },
        targetId: { type: 'string', description: 'Tab id or label from tabs/open (default: the active tab).' },
        label: { type: 'string', description: 'open: a label for the new tab.' },
        interactive: { type: 'boolean' },
        compact: { type: 'boolean' },
        depth: { type: 'integer', minimum: 0 },
        labels: { type: 'boolean', description: 'snapshot: also a screenshot with the refs drawn on.' },
        maxChars: { type: 'integer', minimum: 100 },
        fullPage: { type: 'boolean' },
        element: { type: 'string', description: 'screenshot: CSS selector of one element.' },
        type: { enum: ['png', 'jpeg'] },
        request: {
          type: 'object',
          description: 'act: {kind, ref, text, …} (the same fields are also accepted at the top level).',
          properties: ACT_FIELDS,
        },
        ...ACT_FIELDS,
      },
    },
    async execute(params, ctx) {
      const access = sandboxAccess(await router(), config(), ctx, stateDir);
      if (!access.allowed) {
        return errorResult(
          'The browser is not available in a sandboxed session: there is no sandbox browser, and the host browser needs agents.defaults.sandbox.browser.allowHostControl: true.',
        );
      }
      const caller: Caller = { sandboxed: access.sandboxed };
      try {
        const result = await handleBrowserRequest(service, toRequest(params), caller);
        if (params.action === 'snapshot' || params.action === 'navigate') return snapshotResult(result);
        if (params.action === 'screenshot' || params.action === 'pdf') return fileResult(result);
        return { content: [{ type: 'text', text: JSON.stringify(result) }], details: result };
      } catch (error) {
        return errorResult(`browser ${params.action} failed: ${(error as Error).message.split('\n')[0]}`);
      }
    },
  };
}
