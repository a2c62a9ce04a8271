/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser and use DOM types.)
/**
 * WebChat and the Control UI in a real browser (Debian's Chromium driven by playwright-core)
 * against a real gateway in this process: the agent loop, the OpenAI provider talking to the
 * fake LLM server (whose slow streams make streaming and Stop observable), and the
 * channel-webchat plugin serving an app built for this test.
 *
 * The tests run in order in one browser tab, as one person would use it: sign in, chat,
 * stop a reply, switch conversations, then look around the Control UI. Screenshots go to
 * test-results/web-ui/.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import type { GatewayService } from '../plugins/gateway/service.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { client, startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';
import { AGENT_STACK } from '../sdk/testing.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(REPO, 'test-results', 'web-ui');
const TOKEN = 'ui-test-token-0123456789';
const API_KEY = 'sk-test-very-secret-key';
const PLUGINS = [...AGENT_STACK, 'openai', 'channel-webchat'].map((id) => join(REPO, 'plugins', id));

const STREAMED = 'Streaming works: this reply arrives a few characters at a time, and then it is complete. END';
const LONG = Array.from(
  { length: 60 },
  (_, i) => `Sentence ${i + 1} of a very long story that nobody will read to the end.`,
).join(' ');

/** The log line format the gateway writes (pino JSON). */
const logLine = (level: number, msg: string) =>
  `${JSON.stringify({ level, time: Date.now(), pid: 1, hostname: 'test', plugin: 'gateway', msg })}\n`;

describe.skipIf(!existsSync(CHROMIUM))('web UI in Chromium', () => {
  let fake: FakeLlm;
  let gw: RunningGateway;
  let operator: GatewayClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let configFile: string;
  let logFile: string;
  const pageErrors: string[] = [];

  async function newContext(options: Parameters<Browser['newContext']>[0]): Promise<BrowserContext> {
    const created = await browser.newContext(options);
    // Fail naming the locator that did not show up, well before the test's own timeout.
    created.setDefaultTimeout(10_000);
    return created;
  }

  const shot = (name: string, target: Page = page) =>
    target.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
  const lastAssistant = () => page.locator('.msg.assistant:not(.typing)').last();
  const composer = () => page.getByRole('textbox', { name: 'Message' });

  async function openPage(target: BrowserContext, url: string): Promise<Page> {
    const opened = await target.newPage();
    opened.on('pageerror', (error) => pageErrors.push(`${url}: ${error.message}`));
    opened.on('console', (message) => {
      if (message.type() === 'error' && !/WebSocket/.test(message.text()))
        pageErrors.push(`${url}: console: ${message.text()}`);
    });
    await opened.goto(url);
    return opened;
  }

  /** Wait until the last assistant reply has finished streaming (no aria-busy) and holds `text`. */
  async function replyFinished(text: string): Promise<void> {
    await page.waitForFunction(
      (expected) => {
        const items = [...document.querySelectorAll('.msg.assistant:not(.typing)')];
        const last = items.at(-1);
        return !!last && !last.hasAttribute('aria-busy') && (last.textContent ?? '').includes(expected);
      },
      text,
      { timeout: 15_000 },
    );
  }

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const appDir = join(tempDir('claw-web-ui-'), 'app');
    execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', appDir], { stdio: 'pipe' });
    fake = await startFakeLlm();
    const stateDir = tempDir('claw-web-ui-state-');
    const config = {
      agents: { defaults: { model: { primary: 'openai/gpt-4.1', fallbacks: ['openai/gpt-4.1-mini'] } } },
      models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: API_KEY } } },
      messages: { queue: { debounceMs: 20 } },
      plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } },
    };
    // The same config on disk, so config.get has a file (with secrets) to show.
    configFile = join(stateDir, 'openclaw.json');
    writeFileSync(
      configFile,
      JSON.stringify({ ...config, gateway: { auth: { mode: 'token', token: TOKEN } } }, null, 2),
    );
    logFile = join(stateDir, 'logs', 'gateway.log');
    mkdirSync(join(stateDir, 'logs'), { recursive: true });
    writeFileSync(logFile, logLine(30, 'gateway listening for the web UI test'));
    gw = await startGateway({ stateDir, plugins: PLUGINS, config, gateway: { auth: { mode: 'token', token: TOKEN } } });
    operator = await client(gw.url, { token: TOKEN });
    base = `http://127.0.0.1:${gw.port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    context = await newContext({ viewport: { width: 1280, height: 820 }, colorScheme: 'light' });
  });

  afterAll(async () => {
    await browser?.close();
    await operator?.close();
    await gw?.stop();
    await fake?.close();
  });

  it('asks for the token when the one in the link is wrong, then connects', async () => {
    const other = await newContext({});
    try {
      const login = await openPage(other, `${base}/#token=wrong-token`);
      await login.getByRole('alert').filter({ hasText: 'did not accept' }).waitFor();
      expect(login.url()).not.toContain('wrong-token');
      await shot('sign-in', login);
      await login.getByLabel('Gateway token').fill(TOKEN);
      await login.getByRole('button', { name: 'Connect' }).click();
      await login.locator('.pill[data-phase="open"]').waitFor();
      await login.getByRole('heading', { name: 'Main conversation' }).waitFor();
    } finally {
      await other.close();
    }
  });

  it('signs in with #token=…, takes the token out of the address bar, and opens WebChat', async () => {
    page = await openPage(context, `${base}/#token=${TOKEN}`);
    await page.locator('.pill[data-phase="open"]').waitFor();
    expect(page.url()).toBe(`${base}/`);
    await page.getByRole('heading', { name: 'Main conversation' }).waitFor();
    // The browser signed the challenge with its own device key and got a device token.
    const paired = await operator.request<{ paired: Array<{ clientId?: string }> }>('device.pair.list');
    expect(paired.paired.some((device) => device.clientId === 'claw-web')).toBe(true);
    await shot('chat-empty');
    // From then on the browser keeps its device token, not the gateway's shared token.
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage }))).not.toContain(TOKEN);
    await page.reload();
    await page.locator('.pill[data-phase="open"]').waitFor();
  });

  it('sends with Enter (Shift+Enter is a new line) and shows the reply growing, then finished', async () => {
    fake.script({ text: STREAMED, chunkSize: 3, delayMs: 40 });
    await page.evaluate(() => {
      const seen: number[] = [];
      (window as unknown as { replyLengths: number[] }).replyLengths = seen;
      new MutationObserver(() => {
        const body = [...document.querySelectorAll('.msg.assistant:not(.typing) .body')].at(-1);
        if (body) seen.push((body.textContent ?? '').length);
      }).observe(document.querySelector('.messages')!, { subtree: true, childList: true, characterData: true });
    });
    await composer().click();
    await page.keyboard.type('Tell me something');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('on two lines');
    expect(await composer().inputValue()).toBe('Tell me something\non two lines');
    expect(await page.locator('.msg.user').count()).toBe(0);
    await page.keyboard.press('Enter');
    await page.locator('.msg.user').filter({ hasText: 'on two lines' }).waitFor();
    expect(await composer().inputValue()).toBe('');
    // Mid-stream: text is there, the reply is still marked busy and Stop is offered.
    await page.waitForFunction(() => {
      const last = [...document.querySelectorAll('.msg.assistant:not(.typing)')].at(-1);
      return !!last && last.hasAttribute('aria-busy') && (last.textContent ?? '').includes('Streaming');
    });
    await page.getByRole('button', { name: 'Stop' }).waitFor();
    await shot('chat-streaming');
    await replyFinished('END');
    const lengths = await page.evaluate(() => (window as unknown as { replyLengths: number[] }).replyLengths);
    const partial = new Set(lengths.filter((length) => length > 0 && length < STREAMED.length));
    expect(partial.size, `lengths seen: ${lengths.join(',')}`).toBeGreaterThanOrEqual(2);
    expect((await lastAssistant().locator('.body').textContent())?.trim()).toBe(STREAMED);
    await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'hidden' });
    // It went through the webchat channel, into the main session.
    const sent = fake.requests.at(-1)!.body.messages.at(-1);
    expect(JSON.stringify(sent.content)).toContain('Tell me something\\non two lines');
    const sessions = await operator.request<{ sessions: Array<{ key: string; lastChannel?: string }> }>(
      'sessions.list',
      {},
    );
    expect(sessions.sessions.find((row) => row.key === 'agent:main:main')?.lastChannel).toBe('webchat');
    // The delivered copy of the streamed reply is not shown twice.
    expect(await page.locator('.msg.assistant', { hasText: 'END' }).count()).toBe(1);
    await shot('chat-reply');
  });

  it('stops a long reply with the Stop button', async () => {
    fake.script({ text: LONG, chunkSize: 6, delayMs: 40 });
    await composer().fill('Write a very long story');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForFunction(() => {
      const last = [...document.querySelectorAll('.msg.assistant:not(.typing)')].at(-1);
      return !!last && last.hasAttribute('aria-busy') && (last.textContent ?? '').includes('Sentence 2');
    });
    await page.getByRole('button', { name: 'Stop' }).click();
    await lastAssistant().locator('.stopped', { hasText: 'Stopped' }).waitFor();
    const text = (await lastAssistant().locator('.body').textContent()) ?? '';
    expect(text.length).toBeGreaterThan(0);
    expect(text.length).toBeLessThan(LONG.length);
    await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'hidden' });
    await shot('chat-stopped');
  });

  it('switches conversations from the list and loads each one’s history', async () => {
    // A session WebChat did not start, made by another client.
    fake.script({ text: 'Monday: write the tests.' });
    const { runId } = await operator.request<{ runId: string }>('chat.send', {
      idempotencyKey: 'ui-seed-1',
      sessionKey: 'agent:main:planning',
      message: 'Plan the week',
    });
    await operator.request('agent.wait', { runId, timeoutMs: 10_000 });

    const conversations = page.getByRole('complementary', { name: 'Conversations' });
    await conversations.getByRole('button', { name: /planning/ }).click();
    await page.getByRole('heading', { name: 'planning' }).waitFor();
    await page.locator('.msg.user', { hasText: 'Plan the week' }).waitFor();
    await page.locator('.msg.assistant', { hasText: 'Monday: write the tests.' }).waitFor();
    expect(await page.locator('.msg', { hasText: 'Tell me something' }).count()).toBe(0);
    await page.getByText('as the operator').waitFor();
    await shot('chat-other-session');

    await conversations.getByRole('button', { name: /Main conversation/ }).click();
    await page.locator('.msg.user', { hasText: 'Tell me something' }).waitFor();
    await page.locator('.msg.assistant', { hasText: 'END' }).waitFor();
    expect(await page.locator('.msg', { hasText: 'Plan the week' }).count()).toBe(0);

    // A new chat is a conversation of its own (its own session, through the channel).
    await conversations.getByRole('button', { name: 'New chat' }).click();
    await page.getByRole('heading', { name: 'New chat' }).waitFor();
    expect(await page.locator('.msg').count()).toBe(0);
    fake.script({ text: 'A fresh start.', chunkSize: 4, delayMs: 10 });
    await composer().fill('Start over please');
    await page.keyboard.press('Enter');
    await replyFinished('A fresh start.');
    await page.getByRole('heading', { name: 'Start over please' }).waitFor();
    await conversations.getByRole('button', { name: /Start over please/ }).waitFor();
    const sessions = await operator.request<{ sessions: Array<{ key: string }> }>('sessions.list', {});
    expect(sessions.sessions.map((row) => row.key)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^agent:main:main:topic:[0-9a-f]+$/)]),
    );
    await shot('chat-new-conversation');
  });

  it('lists sessions in the Control UI and opens one in chat', async () => {
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'agent:main:planning' });
    await row.waitFor();
    await page.getByRole('row').filter({ hasText: 'agent:main:main' }).first().waitFor();
    await shot('sessions');
    await row.getByRole('link', { name: 'Open' }).click();
    await page.getByRole('heading', { name: 'planning' }).waitFor();
    await page.locator('.msg.user', { hasText: 'Plan the week' }).waitFor();
  });

  it('shows health and status on the overview', async () => {
    await page.getByRole('link', { name: 'Overview' }).click();
    const gateway = page.locator('.card', { has: page.getByRole('heading', { name: 'Gateway' }) });
    await gateway.getByText('Healthy').waitFor();
    await gateway.getByText('token').waitFor();
    await page.locator('.card', { hasText: 'This browser' }).getByText('operator.admin').waitFor();
    await shot('overview');
  });

  it('disables and re-enables a plugin; the view follows plugins.list and the config', async () => {
    await page.getByRole('link', { name: 'Plugins', exact: true }).click();
    await page.getByRole('heading', { name: 'Plugins', level: 1 }).waitFor();
    const { plugins } = await operator.request<{ plugins: Array<{ id: string; status: string }> }>('plugins.list');
    await page.locator('tr[data-plugin]').first().waitFor();
    const rows = await page
      .locator('tr[data-plugin]')
      .evaluateAll((items) => items.map((item) => item.getAttribute('data-plugin')));
    expect(rows.sort()).toEqual(plugins.map((plugin) => plugin.id).sort());
    const webchat = page.locator('tr[data-plugin="channel-webchat"]');
    expect(await webchat.locator('.badge').first().textContent()).toBe('Running');

    const openai = page.locator('tr[data-plugin="openai"]');
    await openai.getByRole('button', { name: 'Disable OpenAI' }).click();
    await openai.getByText('Off after restart').waitFor();
    await page.getByRole('status').filter({ hasText: 'will be off after the gateway restarts' }).waitFor();
    await openai.getByRole('button', { name: 'Enable OpenAI' }).waitFor();
    expect(JSON.parse(readFileSync(configFile, 'utf8')).plugins.entries.openai.enabled).toBe(false);
    await shot('plugins-disabled');

    await openai.getByRole('button', { name: 'Enable OpenAI' }).click();
    await openai.getByRole('button', { name: 'Disable OpenAI' }).waitFor();
    expect(await openai.getByText('Off after restart').count()).toBe(0);
    expect(JSON.parse(readFileSync(configFile, 'utf8')).plugins.entries.openai.enabled).toBe(true);
  });

  it('shows the config with secrets redacted, refuses an invalid edit and keeps secrets on a valid one', async () => {
    await page.getByRole('link', { name: 'Config' }).click();
    await page.getByRole('tab', { name: 'Raw JSON5' }).click();
    const editor = page.getByLabel('openclaw.json');
    await page.waitForFunction(() =>
      (document.querySelector<HTMLTextAreaElement>('#config-editor')?.value ?? '').includes('"agents"'),
    );
    const shown = await editor.inputValue();
    expect(shown).toContain('"apiKey": "__REDACTED__"');
    expect(shown).toContain('"token": "__REDACTED__"');
    expect(shown).not.toContain(API_KEY);
    expect(shown).not.toContain(TOKEN);
    await shot('config');

    const parsed = JSON.parse(shown);
    await editor.fill(JSON.stringify({ ...parsed, gateway: { ...parsed.gateway, tickIntervalMs: 5 } }, null, 2));
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'Not saved' }).getByText('gateway.tickIntervalMs').waitFor();
    expect(JSON.parse(readFileSync(configFile, 'utf8')).gateway.tickIntervalMs).toBeUndefined();
    await shot('config-invalid');

    await editor.fill(JSON.stringify({ ...parsed, messages: { queue: { debounceMs: 25 } } }, null, 2));
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(/^Saved\. Restart the gateway to apply messages\.queue\.debounceMs/).waitFor();
    const written = JSON.parse(readFileSync(configFile, 'utf8'));
    expect(written.messages.queue.debounceMs).toBe(25);
    expect(written.models.providers.openai.apiKey).toBe(API_KEY);
    expect(written.gateway.auth.token).toBe(TOKEN);
  });

  it('shows the webchat channel running', async () => {
    await page.getByRole('link', { name: 'Channels' }).click();
    const card = page.locator('[data-channel="webchat"]');
    await card.getByText('Running', { exact: true }).waitFor();
    await card.getByText('default', { exact: true }).waitFor();
    // WebChat is configured by default (it runs inside the gateway), so nothing says "not configured".
    await card.getByText('Plugin channel-webchat', { exact: true }).waitFor();
    expect(await card.getByText('not configured').count()).toBe(0);
    await shot('channels');
  });

  it('follows the log live and filters it by level', async () => {
    await page.getByRole('link', { name: 'Logs' }).click();
    const lines = page.getByRole('list', { name: 'Log lines' });
    await lines.getByText('gateway listening for the web UI test').waitFor();
    appendFileSync(logFile, logLine(50, 'a fresh error, written after the page opened'));
    await lines.getByText('a fresh error, written after the page opened').waitFor();
    await page.getByLabel('Level').selectOption('error');
    await lines.getByText('gateway listening for the web UI test').waitFor({ state: 'detached' });
    await lines.getByText('a fresh error, written after the page opened').waitFor();
    await shot('logs');
    await page.getByLabel('Level').selectOption('info');
  });

  it('shows a dropped connection and reconnects by itself', async () => {
    await page.getByRole('link', { name: 'Chat' }).click();
    const service = (await gw.kernel.capabilities.get('service', 'gateway')) as GatewayService;
    const server = service.runtime.server!;
    for (const conn of server.connectionList())
      if (conn.admission?.params.client.id === 'claw-web') await server.closeConnection(conn, 1012, 'test restart');
    await page
      .locator('.banner')
      .getByText(/Reconnecting in/)
      .waitFor();
    await shot('chat-reconnecting');
    await page.locator('.pill[data-phase="open"]').waitFor({ timeout: 10_000 });
    await page.locator('.banner').waitFor({ state: 'hidden' });
    await composer().fill('still there?');
    await page.keyboard.press('Enter');
    await replyFinished('ok');
  });

  it('says in the thread when the model failed and the fallback answers', async () => {
    await page.getByRole('link', { name: 'Chat' }).click();
    // The primary and its one retry fail; the fallback answers.
    const failure = { error: { status: 500, message: 'The server had an error while processing your request.' } };
    fake.script(failure, failure, { text: 'Answered by the fallback.' });
    await composer().fill('are you there?');
    await page.keyboard.press('Enter');
    await page
      .locator('.model-notice')
      .getByText('Model openai/gpt-4.1 failed (500), trying openai/gpt-4.1-mini.')
      .waitFor();
    await replyFinished('Answered by the fallback.');
    expect(fake.requests.slice(-3).map((request) => request.body.model)).toEqual([
      'gpt-4.1',
      'gpt-4.1',
      'gpt-4.1-mini',
    ]);
    await shot('chat-failover');
  });

  it('looks right in dark mode and on a phone', async () => {
    const dark = await newContext({ viewport: { width: 1280, height: 820 }, colorScheme: 'dark' });
    const phone = await newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    try {
      const darkPage = await openPage(dark, `${base}/#token=${TOKEN}`);
      await darkPage.locator('.msg.assistant', { hasText: 'END' }).waitFor();
      const background = await darkPage.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
      expect(background).toBe('rgb(19, 21, 24)');
      await shot('chat-dark', darkPage);
      await darkPage.goto(`${base}/#/plugins`);
      await darkPage.locator('tr[data-plugin]').first().waitFor();
      await shot('plugins-dark', darkPage);

      const phonePage = await openPage(phone, `${base}/#token=${TOKEN}`);
      await phonePage.locator('.msg.assistant', { hasText: 'END' }).waitFor();
      // The conversation list folds away behind a button on narrow screens.
      const list = phonePage.getByRole('complementary', { name: 'Conversations' });
      expect(await list.isVisible()).toBe(false);
      await shot('chat-phone', phonePage);
      await phonePage.getByRole('button', { name: 'Conversations', exact: true }).click();
      await list.getByRole('button', { name: 'New chat' }).waitFor();
      await shot('chat-phone-conversations', phonePage);
    } finally {
      await dark.close();
      await phone.close();
    }
  });

  it('signs out to the sign-in form', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to your gateway' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(false);
    await page.reload();
    await page.getByLabel('Gateway token').waitFor();
  });

  it('ran without script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
