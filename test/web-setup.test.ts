/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser and use DOM types.)
/**
 * The Control UI's Setup view in a real browser (Debian's Chromium via playwright-core),
 * driving the real onboarding wizard over the gateway's wizard.* methods. It starts from a
 * config with no model at all, the way a new user arrives: follow the "no usable model" notice
 * to Setup, set up an OpenAI-compatible server (the fake LLM), see the live test refuse a wrong
 * key, save the right one, and chat.
 * Then add Telegram with a token the fake Bot API refuses, then one it knows; and link
 * WhatsApp (the fake Baileys socket) by the QR code the view draws.
 *
 * The tests run in order in one tab, as one person would. Screenshots go to
 * test-results/web-ui/ (ignored by git).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { qrDataUrl } from '../apps/web/src/qr.js';
import { createWhatsAppPlugin } from '../plugins/channel-whatsapp/index.js';
import { FakeTelegramApi } from './fakes/telegram-api.js';
import { FakeWhatsApp } from './fakes/whatsapp-socket.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';
import { AGENT_STACK } from '../sdk/testing.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(REPO, 'test-results', 'web-ui');
const TOKEN = 'setup-ui-test-token-0123456789';
const GOOD_KEY = 'sk-setup-right-key-4f1c2a9e';
const BAD_KEY = 'sk-setup-wrong-key-77d0b3aa';
const MODEL = 'fake-chat-model';
const PLUGINS = [...AGENT_STACK, 'openai', 'channel-webchat', 'channel-telegram', 'onboard'].map((id) =>
  join(REPO, 'plugins', id),
);
const REPLY = 'Hello from the model you just set up: this arrives in small pieces. DONE';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-sync',
];

describe.skipIf(!existsSync(CHROMIUM))('Setup view in Chromium', () => {
  let fake: FakeLlm;
  let telegram: FakeTelegramApi;
  let gw: RunningGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let configFile: string;
  const pageErrors: string[] = [];

  const shot = (name: string, target: Page = page) =>
    target.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const step = (id: string) => page.locator(`form[data-step="${id}"]`);
  const savedConfig = () => JSON5.parse(readFileSync(configFile, 'utf8')) as Record<string, any>;

  /** Every text the page shows or holds in a field: a typed secret must never come back in it. */
  const pageText = () =>
    page.evaluate(
      () =>
        `${document.body.innerText}\n${[...document.querySelectorAll('input')].map((input) => `${input.value} ${input.placeholder}`).join('\n')}`,
    );

  /** The document, and the view inside it (main scrolls on its own), are no wider than the screen. */
  async function noHorizontalOverflow(target: Page): Promise<void> {
    const sizes = await target.evaluate(() => {
      const main = document.querySelector('main')!;
      return {
        document: document.documentElement.scrollWidth,
        viewport: window.innerWidth,
        view: main.scrollWidth - main.clientWidth,
      };
    });
    expect(sizes.document, 'document width').toBeLessThanOrEqual(sizes.viewport);
    expect(sizes.view, 'the view scrolls sideways').toBeLessThanOrEqual(0);
  }

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const appDir = join(tempDir('claw-web-setup-'), 'app');
    execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', appDir], { stdio: 'pipe' });
    fake = await startFakeLlm({ apiKeys: [GOOD_KEY] });
    telegram = new FakeTelegramApi({ username: 'setup_test_bot' });
    await telegram.start();
    const stateDir = tempDir('claw-web-setup-state-');
    // No model anywhere: not in config, not in the environment.
    const config = {
      messages: { queue: { debounceMs: 20 } },
      channels: { telegram: { apiRoot: telegram.apiRoot } },
      plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } },
    };
    const gateway = { auth: { mode: 'token', token: TOKEN } };
    // The wizard edits openclaw.json through the config write path: it has to be on disk.
    configFile = join(stateDir, 'openclaw.json');
    writeFileSync(configFile, JSON.stringify({ ...config, gateway }, null, 2));
    gw = await startGateway({ stateDir, plugins: PLUGINS, config, gateway, env: {} });
    base = `http://127.0.0.1:${gw.port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'light' });
    // Fail naming the locator that did not show up, well before the test's own timeout.
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/WebSocket/.test(message.text())) pageErrors.push(message.text());
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await telegram?.stop();
    await fake?.close();
  });

  it('says no model can answer, and its link opens the Setup view with its three ways in', async () => {
    await page.goto(`${base}/#token=${TOKEN}`);
    // The first visit makes this browser's device key and pairs it: slow on a busy machine.
    await page.locator('.pill[data-phase="open"]').waitFor({ timeout: 60_000 });
    const notice = page.locator('.model-banner');
    await notice.getByText('No usable model').waitFor();
    await notice.getByRole('link', { name: 'Setup' }).click();
    await page.getByRole('heading', { name: 'Setup', level: 1 }).waitFor();
    expect(page.url()).toBe(`${base}/#/setup`);
    for (const name of ['Set up a model…', 'Add a channel…', 'Start full setup…'])
      await page.getByRole('button', { name }).waitFor();
    // The nav has it too.
    expect(
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Setup' })
        .getAttribute('aria-current'),
    ).toBe('page');
    await noHorizontalOverflow(page);
    await shot('setup-1280');
  }, 90_000);

  it('sets up an OpenAI-compatible server: a wrong key fails the live test, the right one is saved', async () => {
    await page.getByRole('button', { name: 'Set up a model…' }).click();

    // Provider: a radio list, answered from the keyboard.
    const provider = step('model.provider');
    await provider.waitFor();
    await provider.getByRole('radio', { name: /Another OpenAI-compatible server/ }).check();
    await page.keyboard.press('Enter');

    const baseUrl = step('model.baseUrl');
    await baseUrl.getByRole('textbox').fill(fake.openaiBaseUrl);
    await baseUrl.getByRole('button', { name: 'Continue' }).click();

    // The key field is masked, can be shown while typing, and is empty (nothing echoed).
    const apiKey = step('model.apiKey');
    const keyInput = apiKey.locator('input');
    await keyInput.waitFor();
    expect(await keyInput.getAttribute('type')).toBe('password');
    expect(await keyInput.inputValue()).toBe('');
    await keyInput.fill(BAD_KEY);
    await apiKey.getByRole('button', { name: 'Show' }).click();
    expect(await keyInput.getAttribute('type')).toBe('text');
    await apiKey.getByRole('button', { name: 'Hide' }).click();
    expect(await keyInput.getAttribute('type')).toBe('password');
    await keyInput.press('Enter');

    const modelId = step('model.id');
    await modelId.getByRole('textbox').fill(MODEL);
    await modelId.getByRole('button', { name: 'Continue' }).click();

    // The live test ran against the fake with the wrong key, and the provider step comes back with why.
    const failure = step('model.provider').getByRole('alert');
    await failure.waitFor();
    expect(await failure.textContent()).toMatch(/live test failed/i);
    expect(fake.requests.some((request) => request.apiKey === BAD_KEY)).toBe(true);
    expect(await pageText()).not.toContain(BAD_KEY);
    expect(readFileSync(configFile, 'utf8')).not.toContain(BAD_KEY);
    await shot('setup-live-test-failed');

    // Again, with the answers kept (the provider and URL), and the right key this time.
    expect(
      await step('model.provider')
        .getByRole('radio', { name: /Another OpenAI-compatible server/ })
        .isChecked(),
    ).toBe(true);
    await step('model.provider').getByRole('button', { name: 'Continue' }).click();
    expect(await step('model.baseUrl').getByRole('textbox').inputValue()).toBe(fake.openaiBaseUrl);
    await step('model.baseUrl').getByRole('button', { name: 'Continue' }).click();
    await step('model.apiKey').locator('input').fill(GOOD_KEY);
    await step('model.apiKey').getByRole('button', { name: 'Continue' }).click();
    expect(await step('model.id').getByRole('textbox').inputValue()).toBe(MODEL);
    await step('model.id').getByRole('button', { name: 'Continue' }).click();

    // Saved: the closing note, then the done screen pointing at Chat.
    await step('done').waitFor();
    expect(await pageText()).not.toContain(GOOD_KEY);
    await step('done').getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'All set' }).waitFor();
    expect(fake.requests.some((request) => request.apiKey === GOOD_KEY)).toBe(true);
    const saved = savedConfig();
    const ref = saved.agents?.defaults?.model;
    expect(typeof ref === 'string' ? ref : ref?.primary).toMatch(new RegExp(`/${MODEL}$`));
    expect(JSON.stringify(saved)).toContain(GOOD_KEY);
    expect(JSON.stringify(saved)).toContain(fake.openaiBaseUrl);
    // The gateway took the new config: the notice has gone by itself.
    await page.locator('.model-banner').waitFor({ state: 'hidden' });
  }, 60_000);

  it('goes to Chat and gets a streamed reply from the model it just set up', async () => {
    fake.script({ text: REPLY, chunkSize: 3, delayMs: 30 });
    await page.getByRole('link', { name: 'Go to Chat' }).click();
    const composer = page.getByRole('textbox', { name: 'Message' });
    await composer.waitFor();
    await page.evaluate(() => {
      const seen: number[] = [];
      (window as unknown as { replyLengths: number[] }).replyLengths = seen;
      new MutationObserver(() => {
        const body = [...document.querySelectorAll('.msg.assistant:not(.typing) .body')].at(-1);
        if (body) seen.push((body.textContent ?? '').length);
      }).observe(document.querySelector('.messages')!, { subtree: true, childList: true, characterData: true });
    });
    await composer.fill('hi');
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      (expected) => {
        const last = [...document.querySelectorAll('.msg.assistant:not(.typing)')].at(-1);
        return !!last && !last.hasAttribute('aria-busy') && (last.textContent ?? '').includes(expected);
      },
      'DONE',
      { timeout: 20_000 },
    );
    const lengths = await page.evaluate(() => (window as unknown as { replyLengths: number[] }).replyLengths);
    const partial = new Set(lengths.filter((length) => length > 0 && length < REPLY.length));
    expect(partial.size, `lengths seen: ${lengths.join(',')}`).toBeGreaterThanOrEqual(2);
    const request = fake.requests.at(-1)!;
    expect(request.apiKey).toBe(GOOD_KEY);
    expect(request.body.model).toBe(MODEL);
    expect(JSON.stringify(request.body.messages.at(-1).content)).toContain('hi');
  }, 60_000);

  it('adds Telegram: a token the Bot API refuses is shown as refused, a good one is saved', async () => {
    await page.goto(`${base}/#/setup`);
    await page.getByRole('button', { name: 'Add a channel…' }).click();
    const pick = step('channels.pick');
    await pick.waitFor();
    await pick.getByRole('checkbox', { name: /Telegram/ }).check();
    await pick.getByRole('button', { name: 'Continue' }).click();

    const tokenStep = step('channels.telegram.token');
    const tokenInput = tokenStep.locator('input');
    await tokenInput.waitFor();
    expect(await tokenInput.getAttribute('type')).toBe('password');
    const wrong = `${telegram.bot.id}:AAH-this-is-not-the-right-secret-123`;
    await tokenInput.fill(wrong);
    await tokenInput.press('Enter');
    const refused = step('channels.telegram.token').getByRole('alert');
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/refused the token/);
    expect(await pageText()).not.toContain(wrong);
    expect(telegram.calls.some((call) => call.method === 'getMe')).toBe(true);
    await shot('setup-token-refused');

    await step('channels.telegram.token').locator('input').fill(telegram.token);
    await step('channels.telegram.token').getByRole('button', { name: 'Continue' }).click();
    await step('done').waitFor();
    expect(await step('done').textContent()).toContain('@setup_test_bot');
    expect(await pageText()).not.toContain(telegram.token);
    await step('done').getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'All set' }).waitFor();
    expect(savedConfig().channels.telegram.botToken).toBe(telegram.token);
    expect(savedConfig().channels.telegram.apiRoot).toBe(telegram.apiRoot);
  }, 60_000);

  it('cancels a running setup, and fits a 390 px screen', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'light' });
    phone.setDefaultTimeout(15_000);
    try {
      const small = await phone.newPage();
      small.on('pageerror', (error) => pageErrors.push(`390: ${error.message}`));
      await small.goto(`${base}/#token=${TOKEN}`);
      await small.locator('.pill[data-phase="open"]').waitFor({ timeout: 60_000 });
      await small.goto(`${base}/#/setup`);
      await small.getByRole('button', { name: 'Set up a model…' }).waitFor();
      await noHorizontalOverflow(small);
      await shot('setup-390', small);
      await small.getByRole('button', { name: 'Set up a model…' }).click();
      const provider = small.locator('form[data-step="model.provider"]');
      await provider.waitFor();
      await noHorizontalOverflow(small);
      await shot('setup-step-390', small);
      await provider.getByRole('button', { name: 'Cancel setup' }).click();
      await small.getByText('Setup cancelled.').waitFor();
      // The gateway's one wizard slot is free again: a new setup starts at once.
      await small.getByRole('button', { name: 'Set up a model…' }).click();
      await provider.waitFor();
      await provider.getByRole('button', { name: 'Cancel setup' }).click();
      await small.getByText('Setup cancelled.').waitFor();
    } finally {
      await phone.close();
    }
    expect(pageErrors).toEqual([]);
  }, 90_000);
});

describe.skipIf(!existsSync(CHROMIUM))('Setup view: WhatsApp by QR code', () => {
  const whatsapp = new FakeWhatsApp();
  let gw: RunningGateway;
  let browser: Browser;
  let page: Page;
  const qrImage = () => page.getByRole('img', { name: 'QR code to scan with the phone' });
  /** Until the view shows the QR for `payload`, drawn in the browser from the raw text the step carries. */
  const showsQr = async (payload: string) =>
    page.waitForFunction(
      (src) => document.querySelector('img[alt="QR code to scan with the phone"]')?.getAttribute('src') === src,
      await qrDataUrl(payload),
    );

  beforeAll(async () => {
    const appDir = join(tempDir('claw-web-setup-wa-'), 'app');
    execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', appDir], { stdio: 'pipe' });
    const stateDir = tempDir('claw-web-setup-wa-state-');
    const config = { plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } } };
    const gateway = { auth: { mode: 'token', token: TOKEN } };
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ ...config, gateway }, null, 2));
    gw = await startGateway({
      stateDir,
      plugins: [
        ...[...AGENT_STACK, 'channel-webchat', 'onboard'].map((id) => join(REPO, 'plugins', id)),
        createWhatsAppPlugin({ socketFactory: whatsapp.factory }),
      ],
      config,
      gateway,
      env: {},
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    await page.goto(`http://127.0.0.1:${gw.port}/#token=${TOKEN}`);
    await page.locator('.pill[data-phase="open"]').waitFor({ timeout: 60_000 });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  async function pickWhatsApp(): Promise<void> {
    const pick = page.locator('form[data-step="channels.pick"]');
    await pick.getByRole('checkbox', { name: /WhatsApp/ }).check();
    await pick.getByRole('button', { name: 'Continue' }).click();
  }

  it('skips the linking when asked, once the code on screen has had its turn', async () => {
    // A link straight to "Add a channel".
    await page.goto(`http://127.0.0.1:${gw.port}/#/setup?section=channels`);
    await pickWhatsApp();
    await qrImage().waitFor();
    await showsQr(whatsapp.qrs.at(-1)!);
    await page.getByRole('button', { name: 'Skip linking' }).click();
    await page.getByRole('button', { name: /Skipping/ }).waitFor();
    // The gateway is waiting on this code; the next one is answered with "skip".
    whatsapp.rotateQr();
    const done = page.locator('form[data-step="done"]');
    await done.waitFor();
    expect(await done.textContent()).toContain('WhatsApp: skipped');
    await done.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'All set' }).waitFor();
    expect(whatsapp.linked).toBeUndefined();
  }, 60_000);

  it('shows the QR, follows it as it rotates, and finishes once the phone scans it', async () => {
    await page.getByRole('button', { name: 'Set up something else' }).click();
    await page.getByRole('button', { name: 'Add a channel…' }).click();
    await pickWhatsApp();

    await qrImage().waitFor();
    await showsQr(whatsapp.qrs.at(-1)!);
    await page.getByText('Linked devices').waitFor();
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, 'setup-whatsapp-qr.png') });

    whatsapp.rotateQr();
    await showsQr(whatsapp.qrs.at(-1)!);

    whatsapp.scan();
    const done = page.locator('form[data-step="done"]');
    await done.waitFor();
    expect(await done.textContent()).toContain('WhatsApp: linked');
    await done.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'All set' }).waitFor();
    expect(await qrImage().count()).toBe(0);
  }, 60_000);
});
