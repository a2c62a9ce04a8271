/// <reference lib="dom" />
/**
 * Media in WebChat, against a real gateway: chat.send takes an audio attachment (saved 0600
 * under <stateDir>/media/webchat/ and handed to the media step as a dispatch attachment),
 * the /media route serves only signed links to files of the media folder, and in Chromium a
 * history entry shows its image and audio, and the microphone button records from the fake
 * audio device and sends a voice note.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { definePlugin } from '../sdk/index.js';
import type { InboundMedia } from '../sdk/types/channels.js';
import { MEDIA_UNDERSTANDING_SERVICE, type MediaPrepareInput } from '../sdk/types/media.js';
import { AGENT_STACK, scriptedModel, waitFor } from '../sdk/testing.js';
import { client, startGateway, TEST_TOKEN, type RunningGateway } from './gateway-helpers.js';
import { lavfiFile, REPO, tempDir } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const PLUGINS = [...AGENT_STACK, 'channel-webchat'].map((id) => join(REPO, 'plugins', id));

describe('media in WebChat', () => {
  let gw: RunningGateway;
  let operator: GatewayClient;
  let base: string;
  let png: Buffer;
  let ogg: Buffer;
  let reply = 'ok';
  const prepared: InboundMedia[][] = [];
  // The media step as a plugin offers it: here it records what reached it.
  const mediaStep = definePlugin({
    id: 'test-media-step',
    register(api) {
      api.registerService({
        id: MEDIA_UNDERSTANDING_SERVICE,
        api: {
          prepare: async (input: MediaPrepareInput) => (
            prepared.push([...input.attachments]),
            { text: input.text, images: [] }
          ),
        },
      });
    },
  });

  beforeAll(async () => {
    const appDir = join(tempDir('claw-web-media-'), 'app');
    execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', appDir], { stdio: 'pipe' });
    const work = tempDir('claw-web-media-files-');
    png = lavfiFile('color=c=blue:s=32x32', join(work, 'a.png'), '-frames:v', '1');
    ogg = lavfiFile('sine=frequency=440:duration=0.5', join(work, 'b.ogg'), '-c:a', 'libopus');
    gw = await startGateway({
      plugins: [...PLUGINS, mediaStep, scriptedModel(() => reply)],
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        messages: { queue: { debounceMs: 0 } },
        plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } },
      },
    });
    operator = await client(gw.url);
    base = `http://127.0.0.1:${gw.port}`;
  });

  afterAll(async () => {
    await operator?.close();
    await gw?.stop();
  });

  it('chat.send saves an audio attachment owner-only and hands it to the media step', async () => {
    prepared.length = 0;
    await operator.request('chat.send', {
      idempotencyKey: 'voice-1',
      sessionKey: 'agent:main:voice',
      message: '',
      attachments: [{ type: 'audio', mimeType: 'audio/ogg', fileName: 'hello.ogg', content: ogg.toString('base64') }],
    });
    await waitFor(() => prepared.length > 0, 'the media step to get the voice note', 10_000);
    const [file] = prepared[0]!;
    expect(file).toMatchObject({ mimeType: 'audio/ogg', fileName: 'hello.ogg' });
    expect(file!.url!.startsWith(join(gw.stateDir, 'media', 'webchat') + '/')).toBe(true);
    expect(file!.url!.endsWith('.ogg')).toBe(true);
    expect(statSync(file!.url!).mode & 0o777).toBe(0o600);
    expect(readFileSync(file!.url!)).toEqual(ogg);
    // Anything but an image or audio is refused before anything is written.
    await expect(
      operator.request('chat.send', {
        idempotencyKey: 'voice-2',
        sessionKey: 'agent:main:voice',
        message: 'x',
        attachments: [{ mimeType: 'application/pdf', content: 'AAAA' }],
      }),
    ).rejects.toThrow(/mimeType/);
  });

  it('serves media-folder files through signed links only', async () => {
    const dir = join(gw.stateDir, 'media', 'test');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'a.png'), png, { mode: 0o600 });
    const link = await operator.request<{ url: string; mimeType: string; kind: string }>('webchat.media', {
      path: join(dir, 'a.png'),
    });
    expect(link).toMatchObject({ mimeType: 'image/png', kind: 'image' });
    const ok = await fetch(base + link.url);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('image/png');
    expect(ok.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await ok.arrayBuffer())).toEqual(png);
    // No link, a link for another path, or the gateway token alone: refused.
    expect((await fetch(`${base}/media?path=${encodeURIComponent(join(dir, 'a.png'))}`)).status).toBe(401);
    const forged = base + link.url.replace(encodeURIComponent('a.png'), encodeURIComponent('../../openclaw.json'));
    expect((await fetch(forged)).status).toBe(401);
    expect(
      (await fetch(`${base}/media?path=/etc/passwd`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } })).status,
    ).toBe(401);
    // No link is signed for a file outside the media folder, by `..` or otherwise.
    for (const path of [join(dir, '..', '..', 'openclaw.json'), '/etc/passwd', 'media/test/a.png'])
      await expect(operator.request('webchat.media', { path })).rejects.toThrow(/webchat\.media/);
  });

  describe.skipIf(!existsSync(CHROMIUM))('in Chromium', () => {
    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--use-fake-device-for-media-stream',
          '--use-fake-ui-for-media-stream',
          '--autoplay-policy=no-user-gesture-required',
        ],
      });
      const context = await browser.newContext();
      context.setDefaultTimeout(10_000);
      await context.grantPermissions(['microphone'], { origin: base });
      page = await context.newPage();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('shows the image and the audio of a history entry', async () => {
      const dir = join(gw.stateDir, 'media', 'test');
      writeFileSync(join(dir, 'b.ogg'), ogg, { mode: 0o600 });
      reply = `Here you go [[media:${join(dir, 'a.png')}]] [[media:${join(dir, 'b.ogg')}]]`;
      const { runId } = await operator.request<{ runId: string }>('chat.send', {
        idempotencyKey: 'history-1',
        sessionKey: 'agent:main:main',
        message: 'show me',
      });
      await operator.request('agent.wait', { runId, timeoutMs: 10_000 });
      reply = 'got it';
      await page.goto(`${base}/#token=${TEST_TOKEN}`);
      await page.locator('.pill[data-phase="open"]').waitFor();
      const image = page.locator('.msg.assistant img.media-image');
      await image.waitFor();
      await page.waitForFunction(() => {
        const img = document.querySelector<HTMLImageElement>('.msg.assistant img.media-image');
        return !!img && img.complete && img.naturalWidth === 32;
      });
      const audio = page.locator('.msg.assistant audio');
      await audio.waitFor();
      await page.waitForFunction(
        () => (document.querySelector<HTMLAudioElement>('.msg.assistant audio')?.duration ?? 0) > 0.3,
      );
      expect(await page.locator('.msg.assistant').filter({ hasText: 'Here you go' }).count()).toBe(1);
    });

    it('records a voice note from the microphone and sends it as an audio attachment', async () => {
      prepared.length = 0;
      const mic = page.getByRole('button', { name: 'Record a voice note' });
      await mic.click();
      await page.getByRole('button', { name: 'Stop recording and send' }).waitFor();
      await page.getByRole('button', { name: 'Stop recording and send' }).click();
      await waitFor(() => prepared.length > 0, 'the voice note to reach the media step', 10_000);
      const [file] = prepared[0]!;
      expect(file!.mimeType).toBe('audio/webm');
      expect(file!.url!.startsWith(join(gw.stateDir, 'media', 'webchat') + '/')).toBe(true);
      expect(statSync(file!.url!).mode & 0o777).toBe(0o600);
      // A real WebM (EBML header) with content.
      const data = readFileSync(file!.url!);
      expect(data.subarray(0, 4)).toEqual(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]));
      expect(await page.locator('.msg.user audio').count()).toBeGreaterThan(0);
    });
  });
});
