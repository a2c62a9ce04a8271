/**
 * The browser plugin against Debian's Chromium and pages served on 127.0.0.1: snapshot refs,
 * actions by ref, every wait kind, screenshots and PDF, the SSRF policy (a loopback service
 * that is not trusted is never reached, by navigation, subresource, iframe, fetch or
 * redirect), the tool choke point (policy, sandboxed sessions), and an agent that completes
 * a two-step form with a scripted model. One browser serves the whole file.
 */
import { createSocket } from 'node:dgram';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest, ToolResult } from '../sdk/index.js';
import {
  agentStackDirs,
  createTestKernel,
  scriptedModel,
  type ScriptedAnswer,
  type TestKernel,
} from '../sdk/testing.js';
import { useService } from '../sdk/services.js';
import type { AgentService } from '../sdk/agent/index.js';
import { REPO, sleep, waitFor } from './helpers.js';
import { startTestSite, type TestSite } from './browser-pages.js';

const PLUGIN = join(REPO, 'plugins', 'browser');
let site: TestSite;
let kernel: TestKernel;
let respond: (request: ModelRequest) => ScriptedAnswer = () => 'idle';

const text = (result: ToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
const json = (result: ToolResult) => JSON.parse(text(result)) as Record<string, any>;
const browser = (
  params: Record<string, unknown>,
  context: Record<string, unknown> = { agentId: 'main', sessionKey: 'agent:main:main' },
) => kernel.runTool('browser', params, context);
/** The ref of the first snapshot line with this role and name. */
const refOf = (snapshot: string, role: string, name: string) => {
  const match = new RegExp(`${role} "${name}"[^\\n]*\\[ref=(\\w+)\\]`).exec(snapshot);
  if (!match) throw new Error(`no ${role} "${name}" in:\n${snapshot}`);
  return match[1]!;
};

beforeAll(async () => {
  site = await startTestSite();
  kernel = await createTestKernel({
    plugins: [...agentStackDirs(), PLUGIN, scriptedModel((request) => respond(request))],
    config: {
      agents: {
        defaults: { model: 'scripted/main' },
        list: [
          { id: 'main', default: true },
          { id: 'boxed', sandbox: { mode: 'all' } },
          { id: 'boxedhost', sandbox: { mode: 'all', browser: { allowHostControl: true } } },
          { id: 'nobrowser', tools: { deny: ['group:ui'] } },
        ],
      },
      messages: { queue: { debounceMs: 0 } },
      browser: { ssrfPolicy: { allowedHostnames: ['127.0.0.1'] } },
    },
  });
  await kernel.start();
}, 60_000);

afterAll(async () => {
  await kernel?.dispose();
  await site?.close();
});

describe('snapshots and actions by ref', () => {
  it('snapshots with refs (interactive, compact, depth, labels) and acts on them', async () => {
    const opened = json(await browser({ action: 'open', url: `${site.base}/page`, label: 'controls' }));
    expect(opened.tab).toMatchObject({ tabId: expect.stringMatching(/^t\d+$/), label: 'controls', title: 'Test page' });

    const full = text(await browser({ action: 'snapshot' }));
    expect(full).toMatch(/heading "Controls" \[level=1\] \[ref=e\d+\]/);
    expect(full).toMatch(/^\s*- generic/m);

    const interactive = text(await browser({ action: 'snapshot', interactive: true }));
    const lines = interactive.split('\n').slice(1);
    expect(
      lines.every((line) => /^- (textbox|combobox|button|link) /.test(line)),
      interactive,
    ).toBe(true);
    const email = refOf(interactive, 'textbox', 'Email');
    const colour = refOf(interactive, 'combobox', 'Colour');
    const go = refOf(interactive, 'button', 'Go');

    const compact = text(await browser({ action: 'snapshot', compact: true }));
    expect(compact).not.toMatch(/- generic \[ref=e\d+\]:?$/m);
    expect(compact).toContain(`[ref=${go}]`);
    const shallow = text(await browser({ action: 'snapshot', depth: 1 }));
    expect(shallow.split('\n').length).toBeLessThan(full.split('\n').length);

    const labelled = await browser({ action: 'snapshot', interactive: true, labels: true });
    const labels = (labelled.details as any).labels;
    expect(labels.annotations.map((item: { ref: string }) => item.ref)).toEqual(expect.arrayContaining([email, go]));
    expect(readFileSync(labels.path).subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );

    expect(
      json(await browser({ action: 'act', request: { kind: 'type', ref: email, text: 'ada@example.com' } })),
    ).toMatchObject({ ok: true, kind: 'type' });
    expect(json(await browser({ action: 'act', kind: 'select', ref: colour, values: ['Green'] }))).toMatchObject({
      selected: ['g'],
    });
    await browser({ action: 'act', kind: 'hover', ref: go });
    await browser({ action: 'act', kind: 'click', ref: go.slice(1) });
    expect(
      json(await browser({ action: 'act', kind: 'wait', text: 'clicked ada@example.com g', timeoutMs: 5000 })),
    ).toMatchObject({ met: ['text "clicked ada@example.com g"'] });
    await browser({ action: 'act', kind: 'fill', fields: [{ ref: email, value: 'grace@example.com' }] });
    await browser({ action: 'act', kind: 'press', ref: go, key: 'Return' });
    await browser({ action: 'act', kind: 'wait', text: 'clicked grace@example.com g', timeoutMs: 5000 });

    // Refs do not survive a navigation: the old one fails and asks for a new snapshot.
    await browser({ action: 'navigate', url: `${site.base}/form` });
    const stale = await browser({ action: 'act', kind: 'click', ref: go, timeoutMs: 1000 });
    expect(stale.isError).toBe(true);
    const bad = await browser({ action: 'act', kind: 'click', ref: '#go' });
    expect(text(bad)).toMatch(/not a snapshot ref/);

    const tabs = json(await browser({ action: 'tabs' }));
    expect(tabs.tabs).toEqual(
      expect.arrayContaining([expect.objectContaining({ label: 'controls', url: `${site.base}/form`, active: true })]),
    );
  }, 60_000);

  it('waits for a selector, a URL glob, a load state, a JS predicate and text, alone and combined; a condition that never holds times out', async () => {
    const wait = (request: Record<string, unknown>) =>
      browser({ action: 'act', kind: 'wait', timeoutMs: 5000, ...request });
    for (const request of [
      { selector: '#main' },
      { url: '**/dash' },
      { loadState: 'networkidle' },
      { fn: 'window.ready === true' },
      { text: 'Main ready' },
      { timeMs: 50 },
    ]) {
      await browser({ action: 'navigate', url: `${site.base}/delayed` });
      const result = await wait(request);
      expect(result.isError, `${JSON.stringify(request)}: ${text(result)}`).toBeFalsy();
    }
    await browser({ action: 'navigate', url: `${site.base}/delayed` });
    const combined = json(
      await wait({ selector: '#main', url: '**/dash', loadState: 'load', fn: 'window.ready===true' }),
    );
    expect(combined.met).toEqual(['url **/dash', 'load load', 'selector #main', 'fn window.ready===true']);
    const started = Date.now();
    const late = await wait({ url: '**/never', timeoutMs: 100 });
    expect(text(late)).toMatch(/timed out after 100 ms: url \*\*\/never did not happen/);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(text(await wait({}))).toMatch(/wait needs at least one of/);
  }, 60_000);

  it('saves screenshots (viewport, full page, one element) and a PDF to the media dir', async () => {
    await browser({ action: 'navigate', url: `${site.base}/big` });
    const shot = await browser({ action: 'screenshot' });
    const details = shot.details as { path: string; bytes: number; mimeType: string };
    expect(text(shot)).toMatch(/^MEDIA:\//);
    expect(shot.content.some((part) => part.type === 'image')).toBe(true);
    const png = readFileSync(details.path);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.readUInt32BE(16)).toBe(1280);
    expect(png.readUInt32BE(20)).toBe(720);
    expect(details.path.startsWith(join(kernel.stateDir, 'media', 'browser'))).toBe(true);
    expect(statSync(details.path).mode & 0o777).toBe(0o600);
    const full = readFileSync(
      ((await browser({ action: 'screenshot', fullPage: true })).details as { path: string }).path,
    );
    expect(full.readUInt32BE(20)).toBeGreaterThan(720);
    const snap = text(await browser({ action: 'snapshot', interactive: true }));
    const element = readFileSync(
      ((await browser({ action: 'screenshot', ref: refOf(snap, 'button', 'Act 0') })).details as { path: string }).path,
    );
    expect(element.readUInt32BE(16)).toBeLessThan(200);
    expect(text(await browser({ action: 'screenshot', fullPage: true, ref: 'e1' }))).toMatch(
      /fullPage is for page captures only/,
    );
    const pdf = await browser({ action: 'pdf' });
    const file = readFileSync((pdf.details as { path: string }).path);
    expect(file.subarray(0, 5).toString()).toBe('%PDF-');
    expect(file.length).toBeGreaterThan(1000);
  }, 60_000);
});

describe('the SSRF policy', () => {
  it('never reaches a loopback service that is not trusted: navigation, image, iframe, fetch, redirect, other schemes', async () => {
    const direct = await browser({ action: 'navigate', url: `${site.secret}/` });
    expect(text(direct)).toMatch(/navigation blocked: 127\.0\.0\.2 is a loopback/);
    expect(text(await browser({ action: 'open', url: 'http://localhost:9/' }))).toMatch(
      /localhost is an internal name/,
    );
    expect(text(await browser({ action: 'navigate', url: 'file:///etc/passwd' }))).toMatch(/only http and https/);
    expect(
      text(await browser({ action: 'navigate', url: `http://[::ffff:127.0.0.2]:${new URL(site.secret).port}/` })),
    ).toMatch(/blocked/);

    await browser({ action: 'navigate', url: `${site.base}/hostile` });
    // The page's image, iframe and fetch load on their own; once all three are on the blocked list the
    // browser has tried each of them, so an empty secretHits below means none got through.
    const blockedUrls = async () =>
      (json(await browser({ action: 'status' })).blocked as Array<{ url: string }>).map((entry) => entry.url);
    const subresources = ['/img.png', '/frame', '/fetch'].map((path) => `${site.secret}${path}`);
    await waitFor(
      async () => {
        const blocked = await blockedUrls();
        return subresources.every((url) => blocked.includes(url));
      },
      { what: "the hostile page's image, iframe and fetch to be blocked" },
    );
    const redirect = await browser({ action: 'navigate', url: `${site.base}/go-private` });
    expect(text(redirect)).toMatch(/navigation blocked: 127\.0\.0\.2 is a loopback/);
    expect(site.secretHits).toEqual([]);
    const status = json(await browser({ action: 'status' }));
    const blocked = status.blocked.map((entry: { url: string }) => entry.url);
    for (const path of ['/img.png', '/frame', '/fetch', '/redirected'])
      expect(blocked).toContain(`${site.secret}${path}`);
  }, 60_000);
});

describe('WebRTC', () => {
  it('sends no UDP: a page asking a STUN server on 127.0.0.1 reaches nothing and gathers no candidates', async () => {
    const stun = createSocket('udp4');
    const received: string[] = [];
    // A real STUN server answers, so where UDP gets out the page also learns addresses (and finishes at once).
    stun.on('message', (message, from) => {
      received.push(`${from.address}:${from.port} ${message.length} bytes`);
      if (message.length >= 20 && message.readUInt16BE(0) === 0x0001)
        stun.send(stunBindingSuccess(message, from), from.port, from.address);
    });
    await new Promise<void>((resolve) => stun.bind(0, '127.0.0.1', resolve));
    try {
      await browser({ action: 'navigate', url: `${site.base}/webrtc?stun=${stun.address().port}` });
      // The page's icegatheringstatechange "complete" (Chromium gives up on unanswered STUN after ~40 s).
      const done = json(
        await browser({ action: 'act', kind: 'wait', text: 'ICE gathering complete', timeoutMs: 50_000 }),
      );
      expect(done).toMatchObject({ ok: true });
      const snapshot = text(await browser({ action: 'snapshot' }));
      expect(snapshot).toContain('ICE gathering complete: []');
      expect(received).toEqual([]);
    } finally {
      stun.close();
    }
  }, 60_000);
});

/** RFC 5389 Binding success: the request's transaction id and the sender's XOR-MAPPED-ADDRESS (IPv4). */
function stunBindingSuccess(request: Buffer, from: { address: string; port: number }): Buffer {
  const response = Buffer.alloc(32);
  response.writeUInt16BE(0x0101, 0);
  response.writeUInt16BE(12, 2);
  request.copy(response, 4, 4, 20); // magic cookie and transaction id
  response.writeUInt16BE(0x0020, 20);
  response.writeUInt16BE(8, 22);
  response.writeUInt16BE(0x0001, 24);
  response.writeUInt16BE(from.port ^ 0x2112, 26);
  const address = from.address.split('.').reduce((value, part) => value * 256 + Number(part), 0);
  response.writeUInt32BE((address ^ 0x2112a442) >>> 0, 28);
  return response;
}

describe('the tool choke point', () => {
  it('tool policy and sandboxed sessions: refused without allowHostControl; with it, a separate browser that reaches public addresses only', async () => {
    const denied = await browser({ action: 'status' }, { agentId: 'nobrowser', sessionKey: 'agent:nobrowser:main' });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toMatch(/browser/);
    expect(text(denied)).not.toMatch(/"enabled"/);
    const boxed = await browser(
      { action: 'navigate', url: `${site.base}/page` },
      { agentId: 'boxed', sessionKey: 'agent:boxed:main' },
    );
    expect(text(boxed)).toMatch(/not available in a sandboxed session.*allowHostControl/);
    const host = await browser(
      { action: 'navigate', url: `${site.base}/page` },
      { agentId: 'boxedhost', sessionKey: 'agent:boxedhost:main' },
    );
    expect(text(host)).toMatch(
      /navigation blocked: 127\.0\.0\.1 is a loopback .*sandboxed session reaches public addresses only/,
    );
    expect(
      json(await browser({ action: 'status' }, { agentId: 'boxedhost', sessionKey: 'agent:boxedhost:main' })),
    ).toMatchObject({ profile: 'openclaw (sandboxed sessions)', running: false });
  });

  it('an agent completes a two-step form through the tool with a scripted model', async () => {
    const calls: string[] = [];
    // The "model": reads the last tool result and takes the next step.
    respond = (request) => {
      const results = request.messages.filter((message) => message.role === 'toolResult');
      const last = results.at(-1);
      const seen = last
        ? (last.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('')
        : '';
      const call = (args: Record<string, unknown>): ScriptedAnswer => {
        const kind = args.kind ?? (args.request as { kind?: string } | undefined)?.kind;
        calls.push(String(args.action) + (kind ? `:${String(kind)}` : ''));
        return { toolCalls: [{ name: 'browser', arguments: args }] };
      };
      const resultText = (index: number) =>
        (results[index]!.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
      switch (results.length) {
        case 0:
          return call({ action: 'navigate', url: `${site.base}/form` });
        case 1:
          // navigate answers with the page's interactive snapshot: no separate snapshot call.
          return call({
            action: 'act',
            request: { kind: 'type', ref: refOf(seen, 'textbox', 'Name'), text: 'Ada', submit: true },
          });
        case 2:
          return call({ action: 'act', kind: 'wait', text: 'Hello Ada' });
        case 3:
          return call({ action: 'snapshot', interactive: true });
        case 4:
          return call({ action: 'act', kind: 'type', ref: refOf(seen, 'textbox', 'City'), text: 'Paris' });
        case 5:
          return call({ action: 'act', kind: 'click', ref: refOf(resultText(3), 'button', 'Finish') });
        case 6:
          return call({ action: 'act', kind: 'wait', url: '**/done?*', text: 'Registered' });
        case 7:
          return call({ action: 'snapshot' });
        default:
          return /Registered Ada from Paris/.test(seen)
            ? 'The form is done: Registered Ada from Paris.'
            : `unexpected page: ${seen}`;
      }
    };
    const agent = (await useService<AgentService>(kernel, 'agent'))!;
    const result = await agent.run({
      sessionKey: 'agent:main:main',
      message: 'Register Ada from Paris on the test site',
    });
    expect(calls).toEqual([
      'navigate',
      'act:type',
      'act:wait',
      'snapshot',
      'act:type',
      'act:click',
      'act:wait',
      'snapshot',
    ]);
    expect(result).toMatchObject({ status: 'ok', text: 'The form is done: Registered Ada from Paris.' });
  }, 60_000);
});

describe('lifecycle', () => {
  it('closes an idle browser after browser.idleTimeoutMs, and starts again on the next call', async () => {
    const idle = await createTestKernel({
      plugins: [PLUGIN],
      config: { browser: { idleTimeoutMs: 400, ssrfPolicy: { allowedHostnames: ['127.0.0.1'] } } },
    });
    try {
      await idle.start();
      expect(json(await idle.runTool('browser', { action: 'status' }))).toMatchObject({ running: false });
      await idle.runTool('browser', { action: 'navigate', url: `${site.base}/page` });
      expect(json(await idle.runTool('browser', { action: 'status' }))).toMatchObject({ running: true, tabs: 1 });
      // A call longer than the idle timeout keeps the browser: the clock runs only between calls.
      expect(json(await idle.runTool('browser', { action: 'act', kind: 'wait', timeMs: 900 }))).toMatchObject({
        ok: true,
        met: ['900 ms'],
      });
      expect(json(await idle.runTool('browser', { action: 'status' }))).toMatchObject({ running: true });
      const userData = json(await idle.runTool('browser', { action: 'status' })).userDataDir as string;
      expect(statSync(userData).mode & 0o777).toBe(0o700);
      const deadline = Date.now() + 10_000;
      while (json(await idle.runTool('browser', { action: 'status' })).running && Date.now() < deadline)
        await sleep(100);
      expect(json(await idle.runTool('browser', { action: 'status' }))).toMatchObject({ running: false, tabs: 0 });
      expect(existsSync(userData)).toBe(true);
      await idle.runTool('browser', { action: 'navigate', url: `${site.base}/form` });
      expect(json(await idle.runTool('browser', { action: 'tabs' })).tabs).toMatchObject([
        { tabId: 't1', url: `${site.base}/form` },
      ]);
    } finally {
      await idle.dispose();
    }
  }, 60_000);
});
