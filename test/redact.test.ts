/**
 * The redaction layer: the Redactor itself, how the kernel wires it (logger, config
 * checks, transcripts), the gateway's log files, and the acceptance test of the trial
 * finding — a Telegram bot token, quoted in grammY's network errors, must not reach the
 * log file, the console, `channels.status`, `logs.tail` or `claw channels status`.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, createKernel, createLogger, type LogRecord, type Logger } from '../sdk/index.js';
import { createRedactor } from '../host/redact.js';
import { clawPolicy } from '../host/policy.js';
import { configWriter } from '../host/config-write.js';
import { definePlugin, textResult } from '../sdk/index.js';
import { agentStackDirs, bundledPluginDir, createTestKernel, scriptedModel } from '../sdk/testing.js';
import { useService } from '../sdk/services.js';
import { generateDeviceToken } from '../plugins/gateway/auth.js';
import type { AgentService } from '../sdk/agent/index.js';
import { createGatewayLogging } from '../plugins/gateway/logging.js';
import { client, GATEWAY_DIR, gatewayTestPlugin, type RunningGateway } from './gateway-helpers.js';
import { claw, freePort, tempDir, waitFor } from './helpers.js';

const TELEGRAM = fileURLToPath(new URL('../plugins/channel-telegram/', import.meta.url));
const AGENT_LOOP = agentStackDirs();

/** A token shaped like the ones @BotFather hands out: bot id, colon, 35 characters. */
function botToken(): string {
  return `7${String(Date.now()).slice(-9)}:AAH${randomBytes(24).toString('base64url').slice(0, 32)}`;
}

const none = () => createRedactor({ config: {}, env: {} });
/** What `claw gateway` masks with before its kernel boots: the command's kernel has no config secrets here. */
const startup = () => createRedactor({ config: {}, env: process.env });

describe('createRedactor', () => {
  it('masks each built-in secret shape, keeping only a structural prefix', () => {
    const redact = none();
    const cases: Array<[string, string]> = [
      [
        'GET https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1/getMe',
        'GET https://api.telegram.org/bot123456789:***/getMe',
      ],
      ['token 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1 pasted', 'token 123456789:*** pasted'],
      ['OPENAI sk-abcdefghijklmnopqrstuvwxyz0123456789AB', 'OPENAI sk-***'],
      ['sk-proj-Abc_def-ghijklmnopqrstuvwx and sk-ant-api03-abcdefghijklmnopqrstuvwx', 'sk-proj-*** and sk-ant-***'],
      ['curl -H "Authorization: Bearer abc.def.ghi-jkl_mno"', 'curl -H "Authorization: Bearer ***"'],
      ['{"authorization":"Basic dXNlcjpwYXNzd29yZA=="}', '{"authorization":"Basic ***"}'],
      ['sent Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig to the API', 'sent Bearer *** to the API'],
      ['ghp_0123456789abcdefghijABCDEFGHIJ012345 gho_0123456789abcdefghijABCD', 'ghp_*** gho_***'],
      ['github_pat_11ABCDEFG0123456789_abcdefghijklmnop', 'github_pat_***'],
      ['slack xoxb-123456789012-1234567890123-abcdefghij', 'slack xoxb-***'],
      ['aws AKIAIOSFODNN7EXAMPLE here', 'aws AKIA*** here'],
      ['google AIzaSyA-1234567890abcdefghijklmnopqrstu here', 'google AIza*** here'],
      [
        '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc==\n-----END RSA PRIVATE KEY-----\nnext',
        '-----BEGIN RSA PRIVATE KEY-----***\nnext',
      ],
      ['cut off: -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq', 'cut off: -----BEGIN PRIVATE KEY-----***'],
      ['https://ada:hunter2-horse@db.example.com/x', 'https://ada:***@db.example.com/x'],
      ['GET /hook?token=abcdef123456&x=1', 'GET /hook?token=***&x=1'],
      ['https://x.example/?apikey=abcdef123456', 'https://x.example/?apikey=***'],
      ['GITHUB_TOKEN=abcdef123456\nDB_PASSWORD=correct-horse', 'GITHUB_TOKEN=***\nDB_PASSWORD=***'],
      ['{"password":"correct-horse","api_key": "abcdef123456"}', '{"password":"***","api_key": "***"}'],
    ];
    for (const [input, masked] of cases) expect(redact.text(input), input).toBe(masked);
  });

  it('masks configured secrets wherever they are in the config, whole', () => {
    const config = {
      channels: {
        telegram: { botToken: '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1', webhook: { secret: 'hook-secret-42' } },
      },
      plugins: { entries: { search: { config: { apiKey: 'brave-key-0123' } } } },
      models: { providers: { openai: { apiKey: 'OpenAI-Key-4567', baseUrl: 'http://127.0.0.1:1/v1' } } },
      gateway: { auth: { mode: 'token', token: 'gw-shared-token', password: 'pin1' } },
      credentials: { github: { refreshToken: 'refresh-0001' } },
    };
    const redact = createRedactor({ config, env: {} });
    expect(redact.text('bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1 failed')).toBe('bot *** failed');
    expect(redact.text('x-telegram-bot-api-secret-token: hook-secret-42')).toBe('x-telegram-bot-api-secret-token: ***');
    expect(redact.text('brave said no to brave-key-0123, openai to openai-key-4567')).toBe(
      'brave said no to ***, openai to ***',
    );
    expect(redact.text('gw-shared-token / refresh-0001')).toBe('*** / ***');
    // Too short to mask without wrecking text; and not secrets: other keys' values.
    expect(redact.text('pin1 token mode http://127.0.0.1:1/v1')).toBe('pin1 token mode http://127.0.0.1:1/v1');
    // A longer secret containing a shorter one is masked whole.
    const nested = createRedactor({ config: { a: { token: 'abcdefgh' }, b: { token: 'abcdefgh-and-more' } }, env: {} });
    expect(nested.text('abcdefgh-and-more')).toBe('***');
  });

  it('masks values of secret-named environment variables: 8 characters or more, not a plain word', () => {
    const redact = createRedactor({
      config: {},
      env: {
        OPENAI_API_KEY: 'opaque-openai-value',
        TELEGRAM_BOT_TOKEN: 'opaque-telegram',
        OPENCLAW_GATEWAY_TOKEN: 'gwtoken-1234',
        SHORT_TOKEN: 'abc1234',
        FEATURE_KEY: 'true',
        GATEWAY_AUTH_MODE: 'password',
        HOME: '/home/ada/secretive',
        LANG: 'en_US.UTF-8',
      },
    });
    expect(redact.text('opaque-openai-value opaque-telegram gwtoken-1234')).toBe('*** *** ***');
    expect(redact.text('abc1234 true password /home/ada/secretive en_US.UTF-8')).toBe(
      'abc1234 true password /home/ada/secretive en_US.UTF-8',
    );
  });

  it('applies logging.redactPatterns: raw (flags gi) and /pattern/flags, long matches keeping a hint', () => {
    const redact = createRedactor({
      config: { logging: { redactPatterns: ['internal\\.corp', '/CASE-\\d+/'] } },
      env: {},
      patterns: ['/acct_[a-z0-9]+/i', 'q{0}'],
    });
    expect(redact.text('see INTERNAL.corp, CASE-42 but not case-42')).toBe('see ***, *** but not case-42');
    expect(redact.text('ACCT_ABCDEFGHIJKLMNOPQRSTUVWXYZ')).toBe('ACCT_A…WXYZ');
    // A pattern that can match nothing inserts nothing.
    expect(redact.text('plain')).toBe('plain');
  });

  it('reports an invalid pattern as a config error naming it, and never throws', async () => {
    const config = { logging: { redactPatterns: ['fine', '(unclosed', '/[z-a]/'] } };
    expect(() => createRedactor({ config, env: {} })).not.toThrow();
    expect(createRedactor({ config, env: {} }).text('fine (unclosed')).toBe('*** (unclosed');

    const kernel = await createKernel({
      policy: clawPolicy,
      configWriter,
      config,
      stateDir: tempDir('claw-redact-'),
      strictConfig: false,
      logger: createLogger({ level: 'warn' }),
    });
    expect(kernel.issues()).toEqual([
      expect.objectContaining({
        level: 'error',
        path: 'logging.redactPatterns[1]',
        owner: 'kernel',
        message: expect.stringMatching(/^invalid redaction pattern "\(unclosed": .*Unterminated group/),
      }),
      expect.objectContaining({
        level: 'error',
        path: 'logging.redactPatterns[2]',
        message: expect.stringContaining('invalid redaction pattern "/[z-a]/"'),
      }),
    ]);
    const strict = await createKernel({
      policy: clawPolicy,
      configWriter,
      config,
      stateDir: tempDir('claw-redact-'),
      logger: createLogger({ level: 'warn' }),
    }).catch((error: unknown) => error);
    expect(strict).toBeInstanceOf(ConfigError);
    expect((strict as Error).message).toContain('logging.redactPatterns[1]: invalid redaction pattern "(unclosed"');
  });

  it('value(): masks strings deep in plain objects and arrays, copy-on-write, same reference when clean', () => {
    const redact = createRedactor({ config: { channels: { x: { token: 'secret-value-1' } } }, env: {} });
    const clean = {
      type: 'event',
      event: 'chat',
      payload: { runId: 'r1', delta: 'Hello there', seq: 3, list: [1, 'two', null, { ok: true }] },
    };
    expect(redact.value(clean)).toBe(clean);
    expect(redact.value('plain')).toBe('plain');
    expect(redact.value(42)).toBe(42);

    const shared = { note: 'uses secret-value-1' };
    const dirty = {
      a: { b: ['keep', 'secret-value-1'] },
      keep: { same: 'x' },
      one: shared,
      two: shared,
      when: new Date(0),
    };
    const masked = redact.value(dirty);
    expect(masked).toEqual({
      a: { b: ['keep', '***'] },
      keep: { same: 'x' },
      one: { note: 'uses ***' },
      two: { note: 'uses ***' },
      when: new Date(0),
    });
    expect(masked.keep).toBe(dirty.keep);
    expect(masked.when).toBe(dirty.when);
    expect(dirty.a.b[1]).toBe('secret-value-1');

    // Image bytes are never rewritten; cycles terminate.
    const image = { type: 'image', data: 'secret-value-1', mimeType: 'image/png' };
    expect(redact.value(image)).toBe(image);
    const cyclic: Record<string, unknown> = { text: 'secret-value-1' };
    cyclic.self = cyclic;
    expect((redact.value(cyclic) as { text: string }).text).toBe('***');
  });

  it('add() registers a secret at run time', () => {
    const redact = none();
    expect(redact.text('the minted-key-123 works')).toBe('the minted-key-123 works');
    redact.add('minted-key-123');
    redact.add(undefined);
    redact.add('abc');
    expect(redact.text('the minted-key-123 works, abc')).toBe('the *** works, abc');
  });

  it('leaves device tokens, ids and ordinary text alone', () => {
    const redact = createRedactor({ config: {}, env: { OPENCLAW_GATEWAY_TOKEN: 'configured-gateway-token' } });
    // What the gateway hands out per device: 32 random bytes, base64url (43 characters).
    for (let i = 0; i < 2000; i++) {
      const deviceToken = generateDeviceToken(none());
      expect(redact.text(deviceToken)).toBe(deviceToken);
      const frame = { type: 'res', ok: true, payload: { auth: { deviceToken, role: 'operator' } } };
      expect(redact.value(frame)).toBe(frame);
    }
    const prose = [
      'The bearer of this letter asked about tokens, secrets and passwords: nothing to hide here.',
      'Telegram has no bot token: set channels.telegram.botToken in openclaw.json or the TELEGRAM_BOT_TOKEN environment variable',
      'agent:main:telegram:direct:123456789 ran 4 tools in 1200 ms (maxTokens=4096, task-management-for-everyone)',
      'sha256-4f1c9d0b8a7e6f5d4c3b2a1908f7e6d5c4b3a291 uuid 0e8f2a9c-5b7d-4e1f-9a3c-6d2b8e4f1a7c',
      'https://example.com/path?page=2&sort=desc',
    ];
    for (const line of prose) expect(redact.text(line)).toBe(line);
  });

  it('reads a /secret: path segment as a name, not an assignment, yet masks a real secret there', () => {
    const redact = none();
    // A path segment named like a key, then a colon: what follows is a name or the rest of a message.
    const names = [
      'open /run/secret: permission denied',
      'mounted at /run/secret: database-name here',
      'GET https://host/secret:database-connection/x 404',
      'docker: /var/run/secrets/db_password:readonly mount',
      'open /run/secrets/api_key: no such file or directory',
    ];
    for (const line of names) expect(redact.text(line), line).toBe(line);
    const secrets: Array<[string, string]> = [
      // Outside a path the assignment shapes are unchanged.
      ['the token: abcdefghij', 'the token: ***'],
      ['DB_PASSWORD=correct-horse', 'DB_PASSWORD=***'],
      ['{"path":"/x","secret":"abcdefgh1"}', '{"path":"/x","secret":"***"}'],
      // In a path, `=` still assigns, and a random-looking value after the colon is still a secret.
      ['https://host/hook/token=abcdef123456/next', 'https://host/hook/token=***/next'],
      ['https://host/secret:Zx9f8a7s6d5f4g3h2j1k/next', 'https://host/secret:***/next'],
      ['/run/secret:sk-abcdefghijklmnopqrstuvwxyz0123', '/run/secret:***'],
    ];
    for (const [input, masked] of secrets) expect(redact.text(input), input).toBe(masked);
  });

  it('takes vendor prefixes only as the vendor spells them', () => {
    const redact = createRedactor({ config: {}, env: {} });
    const body = 'IjmUDUrMXq9f3aiQLcNwiEKeKDl2rbnOUe3cw7r0';
    // A random base64url token that starts "SK-" (seen in CI) or "Ghp_" is no key.
    for (const token of [`SK-${body}`, `Sk-${body}`, `Ghp_${body}`, `XOXB-${body}`])
      expect(redact.text(token)).toBe(token);
    expect(redact.text(`sk-${body}`)).toBe('sk-***');
    expect(redact.text(`key sk-ant-${body}`)).toBe('key sk-ant-***');
    expect(redact.text(`ghp_${body}`)).toBe('ghp_***');
    // A known secret inside such a token is still masked.
    const withSecret = createRedactor({ config: { apiKey: 'configured-secret-1' }, env: {} });
    expect(withSecret.text(`SK-aaaaconfigured-secret-1bbbbbbbbbbbbbbbbbbbbbbb`)).toBe(
      'SK-aaaa***bbbbbbbbbbbbbbbbbbbbbbb',
    );
    // The case-insensitive shapes stay case-insensitive.
    expect(redact.text(`BEARER ${body}`)).toBe('BEARER ***');
    expect(redact.text(`PASSWORD=${body}`)).toBe('PASSWORD=***');
  });

  it('never issues a device token the redactor would mask', () => {
    // 32 bytes whose base64url starts "sk-": a frame carrying it would say "sk-***".
    const keyShaped = Buffer.from(`sk-${'A'.repeat(40)}`, 'base64url');
    expect(keyShaped.length).toBe(32);
    expect(createRedactor({ config: {}, env: {} }).text(keyShaped.toString('base64url'))).toBe('sk-***');
    const draws = [keyShaped, randomBytes(32)];
    const token = generateDeviceToken(none(), () => draws.shift()!);
    expect(draws).toHaveLength(0);
    expect(token).not.toMatch(/^sk-/);
    expect(token).toHaveLength(43);
  });
});

describe('the kernel wires one redactor everywhere', () => {
  it('masks what plugins log (message, data, child bindings) before the sink sees it', async () => {
    const secret = 'sk-abcdefghijklmnopqrstuvwxyz0123456789';
    const kernel = await createTestKernel({
      env: { SERVICE_API_KEY: 'env-service-key-1' },
      config: { plugins: { entries: { chatty: { config: { apiKey: secret } } } } },
      plugins: [
        definePlugin({
          id: 'chatty',
          configSchema: { type: 'object', properties: { apiKey: { type: 'string' } } },
          register(api) {
            api.logger.warn(`calling with ${api.config.apiKey}`, {
              url: `https://x.example/?key=${api.config.apiKey}`,
              nested: { keys: ['env-service-key-1'] },
            });
            api.logger.child({ auth: 'env-service-key-1' }).info('child');
            expect(api.kernel.redact.text(`${api.config.apiKey}`)).toBe('***');
          },
        }),
      ],
    });
    const logged = JSON.stringify(kernel.logs);
    expect(logged).not.toContain(secret);
    expect(logged).not.toContain('env-service-key-1');
    expect(kernel.logs.find((record) => record.message.startsWith('calling'))).toMatchObject({
      message: 'calling with ***',
      url: 'https://x.example/?key=***',
      nested: { keys: ['***'] },
    });
    expect(kernel.logs.find((record) => record.message === 'child')).toMatchObject({ auth: '***' });
    expect(kernel.redact).toBe(kernel.plugins.kernelServices.redact);
    await kernel.dispose();
  });

  it('keeps secrets out of transcripts and out of what the model reads back', async () => {
    const secret = 'opaque-provider-key-42';
    const seen: string[] = [];
    const kernel = await createTestKernel({
      env: { PROVIDER_API_KEY: secret },
      plugins: [
        ...AGENT_LOOP,
        definePlugin({
          id: 'leak-tool',
          register(api) {
            api.registerTool({
              name: 'printenv',
              description: 'Prints the environment',
              parameters: { type: 'object' },
              execute: () => textResult(`PROVIDER_API_KEY=${secret}`),
            });
          },
        }),
        scriptedModel((request) => {
          const last = request.messages.at(-1)!;
          if (last.role !== 'toolResult') return { toolCalls: [{ name: 'printenv', arguments: {} }] };
          seen.push(JSON.stringify(last.content));
          return `the key is ${secret}`;
        }),
      ],
      config: { agents: { defaults: { model: 'scripted/x' } } },
    });
    const loop = await useService<AgentService>(kernel, 'agent');
    await loop!.run({ sessionKey: 'agent:main:main', message: `remember ${secret}` });
    expect(seen).toEqual([JSON.stringify([{ type: 'text', text: 'PROVIDER_API_KEY=***' }])]);
    const dir = join(kernel.stateDir, 'agents', 'main', 'sessions');
    const transcripts = readdirSync(dir).filter((name) => name.endsWith('.jsonl'));
    expect(transcripts).toHaveLength(1);
    const written = readFileSync(join(dir, transcripts[0]!), 'utf8');
    expect(written).toContain('remember ***');
    expect(written).toContain('the key is ***');
    expect(written).not.toContain(secret);
    // The next turn replays the masked history.
    await loop!.run({ sessionKey: 'agent:main:main', message: 'again' });
    await kernel.dispose();
  });
});

describe('gateway log files', () => {
  it('are owner-only, and mask lines even when written through the gateway logger directly', async () => {
    const stateDir = tempDir('claw-redact-logs-');
    // An older version left a world-readable folder and file behind.
    mkdirSync(join(stateDir, 'logs'), { mode: 0o755 });
    writeFileSync(join(stateDir, 'logs', 'gateway.log'), '', { mode: 0o644 });
    chmodSync(join(stateDir, 'logs'), 0o755);
    const out = capture();
    const logging = createGatewayLogging({
      stateDir,
      level: 'info',
      stdout: out.stream,
      maxFileBytes: 1_000_000,
      redact: startup(),
    });
    const token = botToken();
    // `logging.logger` is the writer itself: no kernel redaction in front of it.
    logging.logger.warn(`GET http://127.0.0.1:9/bot${token}/getMe failed`, {
      header: 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz',
    });
    logging.setRedactor(createRedactor({ config: { x: { password: 'configured-password' } }, env: {} }));
    logging.logger.error('login with configured-password');
    logging.flush();
    // The file stream writes asynchronously: wait for both lines (a fixed 50 ms was too short under load).
    await waitFor(() => (readFileSync(logging.file, 'utf8').match(/\n/g) ?? []).length >= 2, {
      what: 'both lines in the log file',
    });
    const file = readFileSync(logging.file, 'utf8');
    for (const text of [file, out.text()]) {
      expect(text).toContain('/bot7');
      expect(text).toContain('Bearer ***');
      expect(text).toContain('login with ***');
      expect(text).not.toContain(token.split(':')[1]);
      expect(text).not.toContain('configured-password');
    }
    expect(
      file
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).msg),
    ).toEqual([expect.stringContaining(':***/getMe failed'), 'login with ***']);
    expect(statSync(join(stateDir, 'logs')).mode & 0o777).toBe(0o700);
    expect(statSync(logging.file).mode & 0o777).toBe(0o600);

    // A fresh file, and the one rotated away, are 0600 too.
    const fresh = tempDir('claw-redact-logs-');
    const second = createGatewayLogging({
      stateDir: fresh,
      level: 'info',
      stdout: capture().stream,
      maxFileBytes: 10,
      redact: startup(),
    });
    second.logger.info('x'.repeat(100));
    await written(second.file);
    second.flush();
    expect(statSync(second.file).mode & 0o777).toBe(0o600);
    const third = createGatewayLogging({
      stateDir: fresh,
      level: 'info',
      stdout: capture().stream,
      maxFileBytes: 10,
      redact: startup(),
    });
    third.logger.info('after rotation');
    await written(third.file);
    third.flush();
    expect(statSync(`${second.file}.1`).mode & 0o777).toBe(0o600);
    expect(statSync(third.file).mode & 0o777).toBe(0o600);
  });
});

describe('acceptance: a bot token in grammY network errors reaches no output', () => {
  it('keeps it out of gateway.log, stdout, captured logs, channels.status, logs.tail and claw channels status', async () => {
    const token = botToken();
    const secretPart = token.split(':')[1]!;
    const gatewayToken = `gw-${randomBytes(12).toString('hex')}`;
    const stateDir = tempDir('claw-redact-e2e-');
    const closedPort = await freePort();

    const out = capture();
    const logging = createGatewayLogging({
      stateDir,
      level: 'debug',
      stdout: out.stream,
      maxFileBytes: 10_000_000,
      redact: startup(),
    });
    const records: LogRecord[] = [];
    const events: RunningGateway['events'] = { started: [], stopped: [] };
    const kernel = await createTestKernel({
      stateDir,
      logger: tee(logging.logger, createLogger({ level: 'debug', sink: (record) => records.push(record) })),
      plugins: [GATEWAY_DIR, bundledPluginDir('channels'), TELEGRAM, gatewayTestPlugin(events)],
      config: {
        gateway: { port: 0, auth: { mode: 'token', token: gatewayToken } },
        // Nothing listens there: every Bot API call fails with a network error quoting …/bot<token>/getMe.
        channels: { telegram: { botToken: token, apiRoot: `http://127.0.0.1:${closedPort}`, dmPolicy: 'pairing' } },
      },
    });
    try {
      await kernel.start();
      const port = (events.started[0] as { port: number }).port;
      const url = `ws://127.0.0.1:${port}`;

      const lastError = async () =>
        (await kernel.plugins.kernelServices.channels.status()).find((channel) => channel.id === 'telegram')
          ?.accounts[0]?.lastError;
      await waitFor(lastError, { intervalMs: 50, what: "the telegram account's lastError" });
      // The error is there, with the request URL, and masked.
      expect(await lastError()).toMatch(/getMe.*\/bot\d+:\*\*\*\/getMe/);

      const operator = await client(url, { token: gatewayToken });
      const status = await operator.request('channels.status');
      const tail = await operator.request('logs.tail', { limit: 5000 });
      await operator.close();

      const env = { OPENCLAW_STATE_DIR: stateDir, OPENCLAW_GATEWAY_TOKEN: gatewayToken };
      const text = await claw(['channels', 'status'], env);
      const json = await claw(['channels', 'status', '--json'], env);
      expect(text.stdout, text.stderr).toMatch(
        /telegram .*\n {2}default +running, not connected {2}error: .*\/bot\d+:\*\*\*\//,
      );
      expect(JSON.parse(json.stdout)).toMatchObject({
        source: 'gateway',
        channels: expect.arrayContaining([expect.objectContaining({ id: 'telegram' })]),
      });

      logging.flush();
      // The file stream writes asynchronously: wait for the line itself.
      const logFile = join(stateDir, 'logs', 'gateway.log');
      await waitFor(() => /cannot reach the Bot API/.test(readFileSync(logFile, 'utf8')), {
        what: 'the Bot API warning in gateway.log',
      });
      const file = readFileSync(logFile, 'utf8');
      expect(file).toMatch(/cannot reach the Bot API/);
      expect(JSON.stringify(tail)).toMatch(/cannot reach the Bot API/);

      const outputs: Record<string, string> = {
        'logs/gateway.log': file,
        stdout: out.text(),
        'captured logger': JSON.stringify(records),
        'channels.status': JSON.stringify(status),
        'logs.tail': JSON.stringify(tail),
        'claw channels status': text.stdout + text.stderr,
        'claw channels status --json': json.stdout + json.stderr,
      };
      for (const [where, output] of Object.entries(outputs)) {
        expect(output.length, where).toBeGreaterThan(0);
        expect(output.includes(secretPart), `${where} shows the bot token`).toBe(false);
        expect(output.includes(gatewayToken), `${where} shows the gateway token`).toBe(false);
      }
    } finally {
      await kernel.dispose();
      logging.flush();
    }
  });

  it('masks secrets in CLI error messages', async () => {
    const stateDir = tempDir('claw-redact-cli-');
    const token = botToken();
    const port = await freePort();
    const result = await claw(['health', '--url', `ws://127.0.0.1:${port}/bot${token}/x`], {
      OPENCLAW_STATE_DIR: stateDir,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^claw: .*\/bot\d+:\*\*\*\/x/);
    expect(result.stderr).not.toContain(token.split(':')[1]);
  });
});

/** The log file is opened asynchronously: wait until it has content. */
async function written(file: string): Promise<void> {
  await waitFor(() => existsSync(file) && statSync(file).size > 0, { what: `content in ${file}` });
}

function capture(): { stream: Writable; text(): string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

function tee(...loggers: Logger[]): Logger {
  return {
    debug: (message, data) => loggers.forEach((logger) => logger.debug(message, data)),
    info: (message, data) => loggers.forEach((logger) => logger.info(message, data)),
    warn: (message, data) => loggers.forEach((logger) => logger.warn(message, data)),
    error: (message, data) => loggers.forEach((logger) => logger.error(message, data)),
    child: (bindings) => tee(...loggers.map((logger) => logger.child(bindings))),
  };
}
