/**
 * Channel setup declared by the channel plugins (ChannelPlugin.setup): `claw channels add`
 * with each channel's own flags, checked with the platform (the loopback Slack fake) before
 * anything is written, `--use-env`, refused flags — and the onboard wizard's "Add a channel"
 * for Slack over the gateway's wizard.* methods.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack } from './fakes/slack.js';
import { spawnCliGateway, type CliGateway } from './cli-gateway.js';
import { client } from './gateway-helpers.js';
import { claw, CLI, tempDir, writePlugin } from './helpers.js';

const fake = new FakeSlack();
beforeAll(() => fake.start());
afterAll(() => fake.stop());

function state() {
  const dir = tempDir('claw-setup-');
  const env: Record<string, string> = { OPENCLAW_STATE_DIR: dir, SLACK_API_URL: fake.apiUrl };
  const file = join(dir, 'openclaw.json');
  return { dir, env, config: (): any => (existsSync(file) ? JSON5.parse(readFileSync(file, 'utf8')) : {}) };
}

describe('claw channels add --channel slack', () => {
  it('checks both tokens with Slack, saves them, never prints them; logout takes them away', async () => {
    const s = state();
    const calls = fake.calls.length;
    const added = await claw(
      ['channels', 'add', '--channel', 'slack', '--bot-token', fake.botToken, '--app-token', fake.appToken],
      s.env,
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout + added.stderr).not.toContain(fake.botToken);
    expect(added.stdout + added.stderr).not.toContain(fake.appToken);
    expect(fake.calls.slice(calls)).toEqual(expect.arrayContaining(['auth.test', 'apps.connections.open']));
    expect(s.config().channels.slack).toEqual({ botToken: fake.botToken, appToken: fake.appToken });

    // Another account, in HTTP mode: the signing secret instead of the app token.
    const http = await claw(
      ['channels', 'add', 'slack', '--account', 'ops', '--mode', 'http', '--bot-token', fake.botToken].concat([
        '--signing-secret',
        'signing-secret-0123456789',
      ]),
      s.env,
    );
    expect(http.code, http.stderr).toBe(0);
    expect(http.stdout).not.toContain('signing-secret-0123456789');
    expect(s.config().channels.slack.accounts.ops).toEqual({
      mode: 'http',
      botToken: fake.botToken,
      signingSecret: 'signing-secret-0123456789',
    });

    expect((await claw(['channels', 'logout', '--channel', 'slack'], s.env)).code).toBe(0);
    expect(s.config().channels.slack.botToken).toBeUndefined();
    expect(s.config().channels.slack.appToken).toBeUndefined();
    expect(s.config().channels.slack.accounts.ops.botToken).toBe(fake.botToken);
  }, 60_000);

  it('a token Slack refuses: exit 1, the reason, nothing written and the token not shown', async () => {
    const s = state();
    const wrongBot = 'xoxb-9999-not-the-right-token';
    const refused = await claw(
      ['channels', 'add', '--channel', 'slack', '--bot-token', wrongBot, '--app-token', fake.appToken],
      s.env,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused the bot token \(invalid_auth\)/);
    expect(refused.stdout + refused.stderr).not.toContain(wrongBot);
    expect(s.config().channels).toBeUndefined();

    const wrongApp = await claw(
      ['channels', 'add', '--channel', 'slack', '--bot-token', fake.botToken, '--app-token', 'xapp-1-wrong'],
      s.env,
    );
    expect(wrongApp.code).toBe(1);
    expect(wrongApp.stderr).toMatch(/app-level token \(invalid_auth\)/);
    expect(s.config().channels).toBeUndefined();

    const missing = await claw(['channels', 'add', '--channel', 'slack', '--bot-token', fake.botToken], s.env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--app-token .*SLACK_APP_TOKEN with --use-env/);
  }, 60_000);

  it('refuses a flag the channel does not take, naming the flags it does; --help lists them', async () => {
    const s = state();
    const wrong = await claw(['channels', 'add', '--channel', 'slack', '--token', fake.botToken], s.env);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(
      /Unknown option '--token'.*slack takes --mode, --bot-token, --app-token, --signing-secret/,
    );
    expect(wrong.stderr).not.toContain(fake.botToken);
    const notHere = await claw(
      ['channels', 'add', '--channel', 'slack', '--mode', 'http', '--bot-token', fake.botToken, '--app-token', 'x'],
      s.env,
    );
    expect(notHere.code).toBe(2);
    expect(notHere.stderr).toMatch(/--app-token does not apply/);
    expect((await claw(['channels', 'add', '--channel', 'irc', '--bot-token', 'x'], s.env)).stderr).toMatch(
      /irc takes --host, --port, --tls, --nick/,
    );
    expect(s.config().channels).toBeUndefined();

    const help = await claw(['channels', 'add', '--channel', 'slack', '--help'], s.env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--bot-token <secret>.*SLACK_BOT_TOKEN/);
    expect(help.stdout).not.toMatch(/--host/);
  }, 60_000);

  it('--use-env: the variables must be there, are checked with Slack, and nothing secret is written', async () => {
    const s = state();
    const without = await claw(['channels', 'add', '--channel', 'slack', '--use-env'], s.env);
    expect(without.code).toBe(2);
    expect(without.stderr).toMatch(/SLACK_BOT_TOKEN and SLACK_APP_TOKEN are not set/);
    expect(s.config().channels).toBeUndefined();

    const env = { ...s.env, SLACK_BOT_TOKEN: fake.botToken, SLACK_APP_TOKEN: fake.appToken };
    const other = await claw(['channels', 'add', '--channel', 'slack', '--use-env', '--account', 'ops'], env);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/default account only/);

    const refused = await claw(['channels', 'add', '--channel', 'slack', '--use-env'], {
      ...env,
      SLACK_BOT_TOKEN: 'xoxb-0000-refused',
    });
    expect(refused.code).toBe(1);
    expect(s.config().channels).toBeUndefined();

    const calls = fake.calls.length;
    const added = await claw(['channels', 'add', '--channel', 'slack', '--use-env'], env);
    expect(added.code, added.stderr).toBe(0);
    expect(fake.calls.slice(calls)).toEqual(expect.arrayContaining(['auth.test', 'apps.connections.open']));
    expect(added.stdout).toMatch(/SLACK_BOT_TOKEN, SLACK_APP_TOKEN/);
    expect(added.stdout).not.toContain(fake.botToken);
    expect(s.config().channels.slack).toEqual({});
    expect(readFileSync(join(s.dir, 'openclaw.json'), 'utf8')).not.toContain('xoxb-');
  }, 60_000);
});

describe('claw channels add --channel irc', () => {
  it('writes host, port, tls, nick and the channel list; refuses a bad nick; --use-env reads IRC_*', async () => {
    const s = state();
    const added = await claw(
      ['channels', 'add', '--channel', 'irc', '--host', 'irc.example.org', '--nick', 'clawbot'].concat([
        '--channels',
        '#claw, #ops',
        '--no-tls',
        '--port',
        '6667',
        '--nickserv-password',
        'ns-secret-42',
      ]),
      s.env,
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).not.toContain('ns-secret-42');
    expect(s.config().channels.irc).toEqual({
      host: 'irc.example.org',
      port: 6667,
      tls: false,
      nick: 'clawbot',
      channels: ['#claw', '#ops'],
      nickserv: { password: 'ns-secret-42' },
    });
    expect((await claw(['channels', 'logout', '--channel', 'irc'], s.env)).code).toBe(0);
    expect(s.config().channels.irc.nickserv).toBeUndefined();

    const bad = await claw(
      ['channels', 'add', '--channel', 'irc', '--account', 'b', '--host', 'h', '--nick', '1x'],
      s.env,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/nick "1x" is not a valid IRC nick/);
    expect(s.config().channels.irc.accounts).toBeUndefined();
    const port = await claw(
      ['channels', 'add', '--channel', 'irc', '--host', 'h', '--nick', 'n', '--port', 'x'],
      s.env,
    );
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/--port must be a whole number/);

    const fresh = state();
    const env = { ...fresh.env, IRC_HOST: 'irc.example.net', IRC_NICK: 'envbot', IRC_PASSWORD: 'pass-from-env' };
    const fromEnv = await claw(['channels', 'add', '--channel', 'irc', '--use-env', '--channels', '#a'], env);
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(fromEnv.stdout).toMatch(/envbot on irc\.example\.net:6697/);
    expect(fresh.config().channels.irc).toEqual({ channels: ['#a'] });
  }, 60_000);
});

describe("a third-party channel's setup", () => {
  it('is its own declaration: claw channels add reads its flags, types and variables, and runs its check', async () => {
    const s = state();
    const pluginDir = writePlugin(join(tempDir(), 'mx-chat'), {
      manifest: {
        id: 'mx-chat',
        channels: ['mx'],
        configSchema: { type: 'object', additionalProperties: false, properties: {} },
      },
      code: `export default { id: 'mx-chat', register(api) { api.registerChannel({ id: 'mx', label: 'MX', textLimit: 100,
  async send() { return {}; },
  setup: {
    fields: [
      { flag: 'homeserver', key: 'homeserver', label: 'Homeserver URL', required: true },
      { flag: 'access-token', key: 'accessToken', label: 'Access token', secret: true, env: 'MX_ACCESS_TOKEN', required: true },
      { flag: 'initial-sync-limit', key: 'initialSyncLimit', type: 'integer', label: 'Initial sync limit' },
    ],
    async verify(values) {
      if (values.accessToken !== 'mx-good-token') throw Object.assign(new Error('M_UNKNOWN_TOKEN'), { flag: 'access-token' });
      return { name: '@bot:' + new URL(values.homeserver).host };
    },
  } }); } };`,
    });
    writeFileSync(join(s.dir, 'openclaw.json'), JSON.stringify({ plugins: { load: { paths: [pluginDir] } } }));
    const help = await claw(['channels', 'add', '--channel', 'mx', '--help'], s.env);
    expect(help.stdout).toMatch(/--initial-sync-limit <value>\s+Initial sync limit/);
    const noEnv = await claw(['channels', 'add', '--channel', 'mx', '--use-env'], { ...s.env, MX_ACCESS_TOKEN: 'x' });
    expect(noEnv.code).toBe(2);
    expect(noEnv.stderr).toMatch(/needs --homeserver .*mx reads no environment variable for it/);
    const refused = await claw(
      ['channels', 'add', '--channel', 'mx', '--homeserver', 'https://m.example', '--access-token', 'mx-bad-token'],
      s.env,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/M_UNKNOWN_TOKEN/);
    expect(refused.stderr).not.toContain('mx-bad-token');
    const added = await claw(
      [
        'channels',
        'add',
        '--channel',
        'mx',
        '--homeserver',
        'https://m.example',
        '--access-token',
        'mx-good-token',
      ].concat(['--initial-sync-limit', '20']),
      s.env,
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/Checked: @bot:m\.example\./);
    expect(s.config().channels.mx).toEqual({
      homeserver: 'https://m.example',
      accessToken: 'mx-good-token',
      initialSyncLimit: 20,
    });
  }, 60_000);
});

describe('the wizard adds Slack (wizard.* over the gateway)', () => {
  const TOKEN = 'setup-wizard-token-0123456789abcdef';
  let gw: CliGateway;
  let s: ReturnType<typeof state>;
  beforeAll(async () => {
    s = state();
    writeFileSync(join(s.dir, 'openclaw.json'), JSON.stringify({ gateway: { auth: { mode: 'token', token: TOKEN } } }));
    gw = await spawnCliGateway(CLI, s.env);
  }, 60_000);
  afterAll(async () => {
    gw.child.kill('SIGTERM');
    await gw.exited;
  });

  it('asks the mode and both tokens, shows a refused token above its question, saves once Slack accepts', async () => {
    const c = await client(`ws://127.0.0.1:${gw.port}`, { token: TOKEN });
    try {
      let response: any = await c.request('wizard.start', { section: 'channels' });
      expect(response.step.id).toBe('channels.pick');
      expect(response.step.options.map((option: { value: string }) => option.value)).toEqual(
        expect.arrayContaining(['slack', 'irc', 'telegram', 'discord', 'whatsapp']),
      );
      const sessionId = response.sessionId;
      const answer = (stepId: string, value?: unknown) =>
        c.request<any>('wizard.next', { sessionId, answer: { stepId, value } });
      response = await answer('channels.pick', ['slack']);
      expect(response.step).toMatchObject({ id: 'channels.slack.mode', type: 'select' });
      response = await answer('channels.slack.mode', 'socket');
      expect(response.step).toMatchObject({ id: 'channels.slack.bot-token', sensitive: true });
      response = await answer('channels.slack.bot-token', 'xoxb-5555-refused-token');
      expect(response.step).toMatchObject({ id: 'channels.slack.app-token', sensitive: true });
      response = await answer('channels.slack.app-token', fake.appToken);
      // Refused: back to the bot token, the reason above it; the app token typed is kept (masked).
      expect(response.step.id).toBe('channels.slack.bot-token');
      expect(response.step.error).toMatch(/refused the bot token \(invalid_auth\)/);
      expect(JSON.stringify(response)).not.toContain('xoxb-5555-refused-token');
      expect(s.config().channels).toBeUndefined();
      response = await answer('channels.slack.bot-token', fake.botToken);
      expect(response.step.id).toBe('channels.slack.app-token');
      expect(response.step.placeholder).toMatch(/leave empty to keep/);
      expect(JSON.stringify(response)).not.toContain(fake.appToken);
      response = await answer('channels.slack.app-token', '');
      expect(response.step).toMatchObject({ id: 'done', type: 'note' });
      expect(response.step.message).toMatch(/Slack: .*checked and saved/);
      await c.request('wizard.next', { sessionId });
      expect(s.config().channels.slack).toEqual({ botToken: fake.botToken, appToken: fake.appToken });
    } finally {
      c.close();
    }
  }, 60_000);
});
