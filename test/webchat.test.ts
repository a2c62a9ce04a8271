/**
 * The webchat channel. Its platform is the browser, and a browser reaches the channel only
 * through the gateway: so the contract suite's fake platform here is a real GatewayClient
 * calling `webchat.send` and collecting `webchat.message` events over a real socket.
 *
 * The suite boots its own kernel, without the gateway plugin; the plugin handed to it is the
 * real channel-webchat module plus a service that runs a GatewayServer on that same kernel
 * (what the gateway plugin would do), so each boot of the suite gets a gateway whose methods
 * and events are that kernel's.
 *
 * After the contract: the plugin loaded from its directory in a real gateway (the channel
 * runs unconfigured, streams `chat` events, threads, refusals) and its static file serving.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PluginDefinition } from '../kernel/index.js';
import type { EventFrame } from '../sdk/index.js';
import type { ModelRequest } from '../sdk/index.js';
import { definePlugin } from '../sdk/index.js';
import { channelContractSuite, type FakePlatform, type PlatformSent } from '../sdk/channels/contract.js';
import { GatewayClient, GatewayRequestError } from '../apps/cli/gateway-client.js';
import { agentStackDirs, lastUserText, scriptedModel } from '../sdk/testing.js';
import webchatPlugin, {
  bundleCandidates,
  WEBCHAT_TEXT_LIMIT,
  type WebchatMessageEvent,
} from '../plugins/channel-webchat/index.js';
import { StaticBundle } from '../plugins/channel-webchat/static.js';
import { GatewayServer } from '../plugins/gateway/server.js';
import { PairingStore, pairingFile } from '../plugins/gateway/pairing.js';
import { resolveSettings, type GatewaySection } from '../plugins/gateway/settings.js';
import { client, GATEWAY_DEFAULTS, startGateway, TEST_TOKEN, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';

const WEBCHAT_DIR = join(REPO, 'plugins', 'channel-webchat');
const AGENT_LOOP_DIR = agentStackDirs();

/** The gateway section with its manifest defaults, on an ephemeral port. */
const GATEWAY_SECTION: GatewaySection = {
  ...GATEWAY_DEFAULTS,
  port: 0,
  shutdownDrainMs: 0,
  auth: { ...GATEWAY_DEFAULTS.auth, token: TEST_TOKEN },
};

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// ── The contract, with the browser played by a gateway client ─────────────────────

/** Browsers on the gateway: each platform "chat" is a WebChat client id. */
class BrowserPlatform implements FakePlatform {
  private url?: string;
  private connection?: Promise<GatewayClient>;
  private readonly outbox: PlatformSent[] = [];

  /** A new kernel booted with a gateway on `url`: open the browser on it (replies need an open page). */
  async attach(url: string): Promise<void> {
    await this.detach();
    this.url = url;
    await this.client();
  }

  async detach(): Promise<void> {
    const previous = this.connection;
    this.connection = undefined;
    this.url = undefined;
    await (await previous?.catch(() => undefined))?.close();
  }

  private client(): Promise<GatewayClient> {
    if (!this.url) return Promise.reject(new Error('no gateway is running for the current kernel'));
    this.connection ??= (async () => {
      const operator = new GatewayClient({
        url: this.url!,
        token: TEST_TOKEN,
        scopes: ['operator.read', 'operator.write'],
        onEvent: (frame: EventFrame) => {
          if (frame.event !== 'webchat.message') return;
          const message = frame.payload as WebchatMessageEvent;
          this.outbox.push({
            chatId: message.to,
            text: message.text,
            ...(message.threadId ? { threadId: message.threadId } : {}),
            ...(message.replyTo ? { replyTo: message.replyTo } : {}),
          });
        },
      });
      await operator.connect();
      return operator;
    })();
    return this.connection;
  }

  async deliver(message: Parameters<FakePlatform['deliver']>[0]): Promise<void> {
    if (message.kind !== 'direct') throw new Error('WebChat has no groups');
    const operator = await this.client();
    // A fresh idempotency key per delivery: redelivery is the pipeline's to dedupe (by messageId).
    await operator.request('webchat.send', {
      idempotencyKey: randomUUID(),
      text: message.text,
      clientId: message.chatId,
      ...(message.messageId ? { messageId: message.messageId } : {}),
      ...(message.senderName ? { senderName: message.senderName } : {}),
    });
  }

  sent(): PlatformSent[] {
    return this.outbox;
  }

  reset(): void {
    this.outbox.length = 0;
  }

  async stop(): Promise<void> {
    await this.detach();
  }
}

const browsers = new BrowserPlatform();

/** The real plugin, plus a gateway on the suite's kernel (the suite loads no gateway plugin). */
const webchatWithGateway: PluginDefinition = definePlugin({
  id: 'channel-webchat',
  async register(api) {
    await webchatPlugin.register(api);
    let server: GatewayServer | undefined;
    api.registerService({
      id: 'contract-gateway',
      async start() {
        const stateDir = api.kernel.paths.stateDir;
        server = new GatewayServer({
          kernel: api.kernel,
          logger: api.logger,
          settings: resolveSettings(GATEWAY_SECTION, {}),
          pairing: new PairingStore(pairingFile(stateDir), api.kernel.redact),
          version: 'test',
        });
        const { port } = await server.start();
        await browsers.attach(`ws://127.0.0.1:${port}`);
      },
      async stop() {
        await browsers.detach();
        await server?.stop();
      },
    });
  },
});

channelContractSuite({
  channel: 'webchat',
  plugin: webchatWithGateway,
  config: () => ({}),
  textLimit: WEBCHAT_TEXT_LIMIT,
  platform: browsers,
});

// ── In a real gateway, loaded from its directory ──────────────────────────────────

function buildApp(): string {
  const out = join(tempDir('claw-web-'), 'app');
  execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', out], { stdio: 'pipe' });
  return out;
}

describe('webchat in a running gateway', () => {
  const TOKEN = 'webchat-test-token';
  let gw: RunningGateway;
  let operator: GatewayClient;
  let appDir: string;
  const events: EventFrame[] = [];
  const requests: ModelRequest[] = [];

  beforeAll(async () => {
    appDir = buildApp();
    gw = await startGateway({
      plugins: [
        ...AGENT_LOOP_DIR,
        WEBCHAT_DIR,
        scriptedModel((request) => (requests.push(request), `echo: ${lastUserText(request)}`)),
      ],
      gateway: { auth: { mode: 'token', token: TOKEN } },
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        messages: { queue: { debounceMs: 0 } },
        plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } },
      },
    });
    operator = await client(gw.url, { token: TOKEN, onEvent: (frame) => events.push(frame) });
  });
  afterAll(async () => {
    await operator?.close();
    await gw?.stop();
  });

  const send = (params: Record<string, unknown>, as: GatewayClient = operator) =>
    as.request<any>('webchat.send', { idempotencyKey: randomUUID(), ...params });
  const eventsOf = (name: string) =>
    events.filter((frame) => frame.event === name).map((frame) => frame.payload as any);

  it('runs without any channels.webchat config, and says so: configured (by default) and on', async () => {
    const { channels } = await operator.request<{ channels: any[] }>('channels.status');
    const webchat = channels.find((channel) => channel.id === 'webchat');
    expect(webchat).toMatchObject({ pluginId: 'channel-webchat', configured: true, enabled: true });
    expect(webchat.accounts).toEqual([
      expect.objectContaining({ accountId: 'default', running: true, connected: true }),
    ]);
  });

  it('answers webchat.send with the session and run to follow, streams chat events and delivers the reply', async () => {
    const outcome = await send({ text: 'hello from the browser', clientId: 'browser-1' });
    expect(outcome).toEqual({ status: 'dispatched', sessionKey: 'agent:main:main', runId: expect.any(String) });
    await until(
      () => eventsOf('chat').some((event) => event.runId === outcome.runId && event.state === 'final'),
      'the final chat event',
    );
    const final = eventsOf('chat').find((event) => event.runId === outcome.runId && event.state === 'final');
    expect(final.sessionKey).toBe('agent:main:main');
    expect(final.message.content[0].text).toBe('echo: hello from the browser');
    const delivered = eventsOf('webchat.message').filter((message) => message.to === 'browser-1');
    expect(delivered).toEqual([
      expect.objectContaining({
        to: 'browser-1',
        accountId: 'default',
        text: 'echo: hello from the browser',
        media: [],
        ts: expect.any(Number),
      }),
    ]);
    const history = await operator.request<any>('chat.history', { sessionKey: outcome.sessionKey });
    expect(history.messages.map((message: any) => message.role)).toEqual(['user', 'assistant']);
    const sessions = await operator.request<any>('sessions.list', {});
    expect(sessions.sessions.find((row: any) => row.key === 'agent:main:main')).toMatchObject({
      lastChannel: 'webchat',
    });
  });

  it('gives a thread its own session and addresses its replies to that thread', async () => {
    const outcome = await send({ text: 'in a thread', clientId: 'browser-1', threadId: 'abc123' });
    expect(outcome).toMatchObject({ status: 'dispatched', sessionKey: 'agent:main:main:topic:abc123' });
    await until(
      () => eventsOf('webchat.message').some((message) => message.threadId === 'abc123'),
      'the threaded reply',
    );
    expect(eventsOf('webchat.message').find((message) => message.threadId === 'abc123')).toMatchObject({
      to: 'browser-1',
      text: 'echo: in a thread',
    });
  });

  it('passes image attachments to the model', async () => {
    requests.length = 0;
    const pixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const outcome = await send({
      text: 'what is this?',
      clientId: 'browser-1',
      threadId: 'pics',
      attachments: [{ type: 'image', content: `data:image/png;base64,${pixel}` }],
    });
    expect(outcome.status).toBe('dispatched');
    await until(
      () => eventsOf('chat').some((event) => event.runId === outcome.runId && event.state === 'final'),
      'the reply',
    );
    const user = requests[0]!.messages.find((message) => message.role === 'user')!;
    expect(user.content).toEqual(expect.arrayContaining([{ type: 'image', data: pixel, mimeType: 'image/png' }]));
  });

  it('shows a thread conversation in chat.history', async () => {
    const outcome = await send({ text: 'remember me', clientId: 'browser-1', threadId: 'history' });
    await until(
      () => eventsOf('chat').some((event) => event.runId === outcome.runId && event.state === 'final'),
      'the reply',
    );
    const history = await operator.request<any>('chat.history', { sessionKey: outcome.sessionKey });
    expect(history.messages.map((message: any) => message.role)).toEqual(['user', 'assistant']);
  });

  it('refuses what it cannot take, with reasons', async () => {
    const refused = async (params: Record<string, unknown>, as?: GatewayClient) => {
      const error = await send(params, as).then(
        () => undefined,
        (failure: GatewayRequestError) => failure,
      );
      expect(error, JSON.stringify(params)).toBeInstanceOf(GatewayRequestError);
      return error!;
    };
    expect((await refused({ text: 'hi' })).message).toMatch(/clientId/);
    expect((await refused({ text: 'hi', clientId: 'has:colon' })).message).toMatch(/clientId/);
    expect((await refused({ text: '   ', clientId: 'browser-1' })).message).toMatch(/needs text or an attachment/);
    expect(
      (await refused({ text: 'x', clientId: 'browser-1', attachments: [{ content: 'not base64!' }] })).message,
    ).toMatch(/mimeType/);
    expect((await refused({ text: 'x', clientId: 'browser-1', accountId: 'other' })).message).toMatch(
      /account "other" is not running/,
    );
    const reader = await client(gw.url, { token: TOKEN, scopes: ['operator.read'] });
    try {
      expect(await refused({ text: 'x', clientId: 'browser-1' }, reader)).toMatchObject({ code: 'FORBIDDEN' });
    } finally {
      await reader.close();
    }
  });

  it('serves the app without auth, with content types, caching and no way out of its folder', async () => {
    const base = `http://127.0.0.1:${gw.port}`;
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const html = await page.text();
    const script = /src="(assets\/app-[^"]+\.js)"/.exec(html)?.[1];
    const style = /href="(assets\/styles-[^"]+\.css)"/.exec(html)?.[1];
    expect(script && style, html).toBeTruthy();

    const js = await fetch(`${base}/${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await js.text()).length).toBeGreaterThan(1000);
    expect((await fetch(`${base}/${style}`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    const etag = page.headers.get('etag')!;
    expect((await fetch(`${base}/`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    const head = await fetch(`${base}/${script}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');

    expect((await fetch(`${base}/assets/nope.js`)).status).toBe(404);
    expect((await fetch(`${base}/elsewhere`)).status).toBe(404);
    // Raw paths: fetch would normalise the dots away before sending.
    const raw = (path: string) =>
      new Promise<number>((resolve, reject) => {
        request({ host: '127.0.0.1', port: gw.port, path }, (res) => (res.resume(), resolve(res.statusCode!)))
          .on('error', reject)
          .end();
      });
    expect(await raw('/assets/../../package.json')).toBe(400);
    expect(await raw('/assets/..%2f..%2fpackage.json')).toBe(400);
    expect(await raw('/assets/%2e%2e/bundle.json')).toBe(400);
    expect(await raw('/assets/..\\..\\package.json')).toBe(400);
    expect(await raw('/assets/%E0%A4%A')).toBe(400);
    // Listed files only: bundle.json sits in the folder but is not part of the app.
    expect(await raw('/assets/../bundle.json')).toBe(400);
    expect(await raw('/bundle.json')).toBe(404);
  });
});

describe('webchat channel switched off', () => {
  it('refuses webchat.send when channels.webchat.enabled is false', async () => {
    const gw = await startGateway({
      plugins: [...AGENT_LOOP_DIR, WEBCHAT_DIR],
      config: { channels: { webchat: { enabled: false } } },
    });
    const operator = await client(gw.url);
    try {
      const error = await operator
        .request('webchat.send', { idempotencyKey: randomUUID(), text: 'hi', clientId: 'b' })
        .catch((failure: GatewayRequestError) => failure);
      expect(error).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringMatching(/WebChat is not running/) });
    } finally {
      await operator.close();
      await gw.stop();
    }
  });
});

describe('finding and serving the bundle', () => {
  let server: Server;
  let base: string;
  let dir: string;
  let bundle: StaticBundle;

  beforeAll(async () => {
    dir = tempDir('claw-bundle-');
    bundle = new StaticBundle([join(dir, 'missing'), dir]);
    server = createServer((req, res) => (req.url === '/' ? bundle.servePage(req, res) : bundle.serveAsset(req, res)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('looks beside the plugin (source tree, then the build) unless a root is configured', () => {
    const [source, built] = bundleCandidates(undefined, '/home/u/.openclaw/openclaw.json');
    expect(source).toBe(join(REPO, 'apps', 'web', 'dist'));
    expect(built).toBe(join(REPO, 'apps', 'web'));
    expect(bundleCandidates('web', '/home/u/.openclaw/openclaw.json')).toEqual(['/home/u/.openclaw/web']);
  });

  it('explains how to build the app while it is missing, and serves a build as soon as it appears', async () => {
    const missing = await fetch(`${base}/`);
    expect(missing.status).toBe(503);
    expect(await missing.text()).toContain('node apps/web/build.mjs');
    expect(bundle.location()).toBeUndefined();

    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><p>v1</p>');
    writeFileSync(join(dir, 'assets', 'a-1.js'), 'console.log(1)');
    writeFileSync(join(dir, 'bundle.json'), JSON.stringify({ files: ['index.html', 'assets/a-1.js'] }));
    expect(await (await fetch(`${base}/`)).text()).toBe('<!doctype html><p>v1</p>');
    expect(bundle.location()).toBe(dir);
    expect((await fetch(`${base}/assets/a-1.js`)).status).toBe(200);

    // A rebuild (new bundle.json) is picked up without a restart.
    writeFileSync(join(dir, 'index.html'), '<!doctype html><p>version two</p>');
    writeFileSync(join(dir, 'bundle.json'), JSON.stringify({ files: ['index.html'] }));
    expect(await (await fetch(`${base}/`)).text()).toBe('<!doctype html><p>version two</p>');
    expect((await fetch(`${base}/assets/a-1.js`)).status).toBe(404);
  });
});
