/**
 * image_generate against a fake OpenAI-compatible images server on 127.0.0.1 answering with a
 * real PNG (made by ffmpeg): through the real Telegram plugin and the fake Bot API the
 * generated file goes out as sendPhoto; edits read workspace files only; a linked image on a
 * private address is refused by the SSRF guard; provider errors surface with the key masked.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentStackDirs, bundledPluginDir, createTestKernel, scriptedModel, type TestKernel } from '../sdk/testing.js';
import type { ModelRequest } from '../sdk/types/models.js';
import { FakeTelegramApi } from './fakes/telegram-api.js';
import { lavfiFile, tempDir } from './helpers.js';

const KEY = 'sk-image-secret-0123456789';
const ADA = { id: 1001, first_name: 'Ada' };

type Mode = 'b64' | 'url' | 'private-url' | 'error';
interface Seen {
  path: string;
  contentType: string;
  body: Buffer;
  authorization?: string;
}

let png: Buffer;
let server: Server;
let base: string;
let mode: Mode = 'b64';
const seen: Seen[] = [];
const telegram = new FakeTelegramApi();

const body = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
  });

beforeAll(async () => {
  const dir = tempDir('claw-image-gen-');
  png = lavfiFile('color=c=red:s=16x16', join(dir, 'red.png'), '-frames:v', '1');
  server = createServer((req, res) => {
    void body(req).then((data) => {
      if (req.method === 'GET' && req.url === '/files/red.png') {
        res.writeHead(200, { 'content-type': 'image/png' });
        return res.end(png);
      }
      seen.push({
        path: req.url ?? '',
        contentType: String(req.headers['content-type'] ?? ''),
        body: data,
        authorization: req.headers.authorization,
      });
      const port = (server.address() as AddressInfo).port;
      res.setHeader('content-type', 'application/json');
      if (mode === 'error') {
        res.statusCode = 401;
        return res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }));
      }
      const item =
        mode === 'b64'
          ? { b64_json: png.toString('base64') }
          : { url: `http://${mode === 'url' ? '127.0.0.1' : 'localhost'}:${port}/files/red.png` };
      res.end(JSON.stringify({ created: 1, data: [item] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  await telegram.start();
});

afterAll(async () => {
  await telegram.stop();
  await new Promise((resolve) => server.close(resolve));
});

const text = (result: { content: Array<{ type: string; text?: string }> }) =>
  result.content.map((part) => part.text ?? '').join('');

async function withKernel(body: (kernel: TestKernel) => Promise<void>, extra: Record<string, unknown> = {}) {
  const kernel = await createTestKernel({
    plugins: [bundledPluginDir('image-generation')],
    config: { models: { providers: { openai: { baseUrl: base, apiKey: KEY } } }, ...extra },
  });
  try {
    await body(kernel);
  } finally {
    await kernel.dispose();
  }
}

describe('image_generate', () => {
  it('generates through the agent and the image goes out on Telegram as a photo', async () => {
    mode = 'b64';
    seen.length = 0;
    telegram.reset();
    const requests: ModelRequest[] = [];
    const kernel = await createTestKernel({
      plugins: [
        ...agentStackDirs(),
        bundledPluginDir('channel-telegram'),
        bundledPluginDir('image-generation'),
        scriptedModel((request) => {
          requests.push(request);
          const last = request.messages.at(-1);
          if (last?.role === 'toolResult') return 'Here is your red square.';
          return { text: '', toolCalls: [{ name: 'image_generate', arguments: { prompt: 'a red square' } }] };
        }),
      ],
      config: {
        agents: { defaults: { model: 'scripted/echo', mediaModels: { image: { primary: 'openai/gpt-image-1' } } } },
        models: { providers: { openai: { baseUrl: base, apiKey: KEY } } },
        messages: { queue: { debounceMs: 0 } },
        channels: {
          telegram: { botToken: telegram.token, apiRoot: telegram.apiRoot, dmPolicy: 'open', allowFrom: ['*'] },
        },
      },
    });
    try {
      await kernel.start();
      await telegram.pushUpdate({
        message: telegram.message({ chatId: ADA.id, from: ADA, text: 'draw a red square' }),
      });
      const photo = await telegram.waitFor((call) => call.method === 'sendPhoto', 10_000, 'sendPhoto');
      expect(photo.status).toBe(200);
      expect(photo.files.photo!.data).toEqual(png);
      expect(photo.params.caption).toContain('Here is your red square.');
      // The model asked the configured model; the key went only in the Authorization header.
      expect(seen).toHaveLength(1);
      expect(seen[0]!.path).toBe('/v1/images/generations');
      expect(JSON.parse(seen[0]!.body.toString())).toMatchObject({
        model: 'gpt-image-1',
        prompt: 'a red square',
        n: 1,
      });
      expect(seen[0]!.authorization).toBe(`Bearer ${KEY}`);
      // The file is kept owner-only in the media folder.
      const folder = join(kernel.stateDir, 'media', 'image-generation');
      const [name] = readdirSync(folder);
      const path = join(folder, name!);
      // The model saw where it is.
      expect(JSON.stringify(requests.at(-1)!.messages)).toContain(`MEDIA:${path}`);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(readFileSync(path)).toEqual(png);
    } finally {
      await kernel.dispose();
    }
  });

  it('edits a workspace image (multipart) and takes a URL answer from the configured host', () =>
    withKernel(async (kernel) => {
      mode = 'url';
      seen.length = 0;
      const workspace = tempDir('claw-image-ws-');
      const source = Buffer.concat([png]);
      writeFileSync(join(workspace, 'photo.png'), source);
      const result = await kernel.runTool(
        'image_generate',
        { prompt: 'make it blue', image: 'photo.png', size: '1024x1024' },
        { workspaceDir: workspace },
      );
      expect(result.isError, text(result)).toBeFalsy();
      expect(seen[0]!.path).toBe('/v1/images/edits');
      expect(seen[0]!.contentType).toMatch(/^multipart\/form-data; boundary=/);
      const multipart = seen[0]!.body.toString('latin1');
      expect(multipart).toContain('name="image"; filename="photo.png"');
      expect(multipart).toContain(source.toString('latin1'));
      expect(multipart).toContain('make it blue');
      const details = result.details as { media: string[]; action: string };
      expect(details.action).toBe('edit');
      expect(readFileSync(details.media[0]!)).toEqual(png);
    }));

  it('refuses a source image outside the workspace, and sends nothing', () =>
    withKernel(async (kernel) => {
      seen.length = 0;
      const workspace = tempDir('claw-image-ws-');
      const outside = join(tempDir('claw-image-out-'), 'secret.png');
      writeFileSync(outside, png);
      for (const image of [outside, '../secret.png', 'https://example.com/a.png']) {
        const result = await kernel.runTool('image_generate', { prompt: 'x', image }, { workspaceDir: workspace });
        expect(result.isError).toBe(true);
        expect(text(result)).toMatch(/outside the workspace|does not exist|not a URL/);
      }
      expect(seen).toHaveLength(0);
    }));

  it('refuses a linked image on a private address (SSRF), saving nothing', () =>
    withKernel(async (kernel) => {
      mode = 'private-url';
      const result = await kernel.runTool('image_generate', { prompt: 'x' });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/refused to fetch the image the provider linked .*blocked by the SSRF policy/);
      expect(() => statSync(join(kernel.stateDir, 'media', 'image-generation'))).toThrow();
    }));

  it("surfaces the provider's error with the key masked, and names the key when none is set", async () => {
    await withKernel(async (kernel) => {
      mode = 'error';
      const result = await kernel.runTool('image_generate', { prompt: 'x', model: 'openai/gpt-image-2' });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/HTTP 401: Incorrect API key provided/);
      expect(text(result)).not.toContain(KEY);
    });
    const kernel = await createTestKernel({
      plugins: [bundledPluginDir('image-generation')],
      env: { OPENAI_API_KEY: '' },
    });
    try {
      const result = await kernel.runTool('image_generate', { prompt: 'x' });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/models\.providers\.openai\.apiKey or OPENAI_API_KEY/);
    } finally {
      await kernel.dispose();
    }
  });
});
