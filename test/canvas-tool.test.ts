/**
 * The canvas tool through the kernel's tool choke point, with a fake "nodes" service standing
 * in for the gateway: which node it picks, what it sends (a capability URL for a canvas-folder
 * path, OpenClaw's params), and what the model gets back (text, JSON, an image).
 */
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkCapability, loadCanvasSecret } from '../plugins/canvas/capability.js';
import {
  definePlugin,
  NodeInvokeError,
  NODES_SERVICE,
  type NodeInfo,
  type NodeInvokeOptions,
  type NodeService,
  type ToolResult,
} from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { REPO } from './helpers.js';

const CANVAS = ['canvas.present', 'canvas.hide', 'canvas.navigate', 'canvas.eval', 'canvas.snapshot'];

function nodeInfo(nodeId: string, commands: string[], extra: Partial<NodeInfo> = {}): NodeInfo {
  return {
    nodeId,
    displayName: `Tab ${nodeId}`,
    platform: 'web',
    remoteIp: '127.0.0.1',
    connected: true,
    paired: true,
    caps: ['canvas'],
    declaredCommands: commands,
    commands,
    lastSeenAtMs: Date.now(),
    ...extra,
  };
}

interface Sent {
  nodeId: string;
  command: string;
  params: unknown;
  options?: NodeInvokeOptions;
}

class FakeNodes implements NodeService {
  sent: Sent[] = [];
  constructor(
    public nodes: NodeInfo[],
    public answer: (sent: Sent) => unknown = () => ({ ok: true }),
  ) {}
  async list() {
    return this.nodes;
  }
  async resolve(query: string) {
    const node = this.nodes.find((entry) => entry.nodeId === query || entry.displayName === query);
    if (!node) throw new NodeInvokeError('NOT_FOUND', `unknown node: ${query}`);
    return node;
  }
  async invoke(nodeId: string, command: string, params: unknown, options?: NodeInvokeOptions) {
    const sent = { nodeId, command, params, options };
    this.sent.push(sent);
    return this.answer(sent);
  }
}

let kernel: TestKernel | undefined;
afterEach(async () => {
  await kernel?.dispose();
  kernel = undefined;
});

async function boot(nodes: FakeNodes, config: Record<string, unknown> = {}): Promise<TestKernel> {
  kernel = await createTestKernel({
    plugins: [
      join(REPO, 'plugins', 'canvas'),
      definePlugin({ id: 'fake-nodes', register: (api) => api.registerService({ id: NODES_SERVICE, api: nodes }) }),
    ],
    config,
  });
  await kernel.start();
  return kernel;
}

const text = (result: ToolResult) => (result.content[0] as { text: string }).text;
const run = (params: Record<string, unknown>) =>
  kernel!.runTool('canvas', params, { agentId: 'main', sessionKey: 'agent:main:main' });

describe('canvas tool', () => {
  it('presents a canvas-folder page as a capability URL on the only canvas node', async () => {
    const nodes = new FakeNodes([nodeInfo('other', ['system.run']), nodeInfo('tab1', CANVAS)]);
    const k = await boot(nodes);
    const folder = join(k.stateDir, 'workspace', 'canvas');
    // The first call makes the folder, owner-only, so the agent finds where pages go.
    expect(text(await run({ action: 'present', target: 'index.html' }))).toMatch(/no file index\.html/);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    writeFileSync(join(folder, 'index.html'), '<p>hello</p>');

    for (const target of ['index.html', 'canvas/index.html', '/']) {
      const result = await run({ action: 'present', target });
      expect(result.isError).toBeFalsy();
      const sent = nodes.sent.at(-1)!;
      expect([sent.nodeId, sent.command]).toEqual(['tab1', 'canvas.present']);
      const url = (sent.params as { url: string }).url;
      const match = /^\/__openclaw__\/canvas\/([^/]+)\/index\.html$/.exec(url);
      expect(match, url).not.toBeNull();
      expect(checkCapability(loadCanvasSecret(k.stateDir), match![1]!)).toMatchObject({ ok: true, agentId: 'main' });
      expect(JSON.parse(text(result))).toEqual({ ok: true, node: 'tab1', url });
      expect(sent.options).toMatchObject({ timeoutMs: 30_000, sessionKey: 'agent:main:main' });
      expect(sent.options?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    }

    await run({ action: 'present', target: 'https://example.com/page', x: 10, width: 300 });
    expect(nodes.sent.at(-1)!.params).toEqual({
      url: 'https://example.com/page',
      placement: { x: 10, y: undefined, width: 300, height: undefined },
    });
    await run({ action: 'present' });
    expect(nodes.sent.at(-1)!.params).toEqual({});
    await run({ action: 'navigate', url: 'index.html?tab=2#top' });
    expect(nodes.sent.at(-1)).toMatchObject({ command: 'canvas.navigate' });
    expect((nodes.sent.at(-1)!.params as { url: string }).url).toMatch(/\/index\.html\?tab=2#top$/);
    await run({ action: 'hide' });
    expect(nodes.sent.at(-1)).toMatchObject({ command: 'canvas.hide', params: undefined });
  });

  it('refuses pages it cannot show, before reaching a node', async () => {
    const nodes = new FakeNodes([nodeInfo('tab1', CANVAS)]);
    await boot(nodes);
    const missing = await run({ action: 'present', target: 'nope.html' });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(
      /no file nope\.html in the canvas folder.*Write the page under <workspace>\/canvas\//,
    );
    const scheme = await run({ action: 'navigate', url: 'javascript:alert(1)' });
    expect(text(scheme)).toMatch(/only http\(s\) URLs or paths in the canvas folder/);
    const dots = await run({ action: 'present', target: '../openclaw.json' });
    expect(text(dots)).toMatch(/names starting with "\."/);
    expect(text(await run({ action: 'navigate' }))).toMatch(/navigate needs url/);
    expect(text(await run({ action: 'eval' }))).toMatch(/eval needs javaScript/);
    expect(nodes.sent).toEqual([]);
  });

  it('returns what eval computed and the snapshot as an image', async () => {
    const nodes = new FakeNodes([nodeInfo('tab1', CANVAS)], (sent) =>
      sent.command === 'canvas.eval' ? { result: '42' } : { format: 'png', base64: 'iVBORw0KGgo=' },
    );
    await boot(nodes);
    const evaluated = await run({ action: 'eval', javaScript: '6 * 7' });
    expect(nodes.sent.at(-1)).toMatchObject({ command: 'canvas.eval', params: { javaScript: '6 * 7' } });
    expect(text(evaluated)).toBe('42');

    const snapshot = await run({ action: 'snapshot', outputFormat: 'jpg', maxWidth: 400, quality: 0.8 });
    expect(nodes.sent.at(-1)).toMatchObject({
      command: 'canvas.snapshot',
      params: { format: 'jpeg', maxWidth: 400, quality: 0.8 },
    });
    expect(snapshot.content[1]).toEqual({ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' });
    expect(text(snapshot)).toMatch(/Canvas snapshot from node tab1/);
  });

  it('says which node it needs when none or several fit', async () => {
    const nodes = new FakeNodes([nodeInfo('mac', ['system.run'])]);
    await boot(nodes);
    expect(text(await run({ action: 'hide' }))).toMatch(
      /no connected node has a canvas \(canvas\.hide\); connected: Tab mac \(mac\)\. Open claw's web UI/,
    );

    nodes.nodes = [nodeInfo('waiting', [], { declaredCommands: CANVAS })];
    expect(text(await run({ action: 'hide' }))).toMatch(
      /node Tab waiting \(waiting\) declares canvas\.hide but may not run it yet/,
    );

    nodes.nodes = [nodeInfo('a1', CANVAS), nodeInfo('b2', CANVAS), nodeInfo('gone', CANVAS, { connected: false })];
    expect(text(await run({ action: 'hide' }))).toMatch(
      /several connected nodes can run canvas\.hide; pass node \(one of: Tab a1 \(a1\), Tab b2 \(b2\)\)/,
    );
    expect((await run({ action: 'hide', node: 'Tab b2' })).isError).toBeFalsy();
    expect(nodes.sent.at(-1)!.nodeId).toBe('b2');
    expect(text(await run({ action: 'hide', node: 'gone' }))).toMatch(/node Tab gone \(gone\) is not connected/);
    expect(text(await run({ action: 'hide', node: 'ghost' }))).toMatch(/unknown node: ghost \[NOT_FOUND\]/);

    nodes.nodes = [nodeInfo('a1', CANVAS)];
    nodes.answer = () => {
      throw new NodeInvokeError(
        'NODE_DISCONNECTED',
        'node a1 disconnected before answering; canvas.eval was not retried',
        'a1',
      );
    };
    const failed = await run({ action: 'eval', javaScript: '1' });
    expect(failed.isError).toBe(true);
    expect(text(failed)).toMatch(/canvas eval failed: node a1 disconnected.*\[NODE_DISCONNECTED\]/);
  });

  it('shows no canvas-folder pages while the host is off', async () => {
    const nodes = new FakeNodes([nodeInfo('tab1', CANVAS)]);
    await boot(nodes, { plugins: { entries: { canvas: { config: { host: { enabled: false } } } } } });
    const off = await run({ action: 'present', target: 'index.html' });
    expect(text(off)).toMatch(/canvas host is off \(plugins\.entries\.canvas\.config\.host\.enabled is false\)/);
    expect((await run({ action: 'present', target: 'https://example.com/' })).isError).toBeFalsy();
  });
});
