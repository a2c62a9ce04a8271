import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  createKernel,
  formatIssue,
  getPath,
  readConfigFile,
  redactConfig,
  REDACTED,
  resolveConfigPath,
  resolveStateDir,
  setPath,
  silentLogger,
  unsetPath,
  type ConfigIssue,
} from '../sdk/index.js';
import { bundledPluginDir, createTestKernel } from '../sdk/testing.js';
import { clawPolicy } from '../host/policy.js';
import { configWriter, writeConfigFile } from '../host/config-write.js';
import { IGNORED_OPENCLAW_KEY } from '../host/config-checks.js';
import { clawDiscovery } from '../host/discovery.js';
import { composeConfigSchema } from '../host/config-schema.js';
import { parsePath } from '../apps/cli/config-path.js';
import { EMPTY_SCHEMA, tempDir, writePlugin } from './helpers.js';

const strictPlugin = {
  id: 'strict',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['token'],
    properties: { token: { type: 'string' }, port: { type: 'integer', minimum: 1, default: 8080 } },
  },
  register() {},
};

function errors(issues: ConfigIssue[]) {
  return issues.filter((issue) => issue.level === 'error').map(formatIssue);
}

describe('config paths', () => {
  it('defaults to ~/.openclaw/openclaw.json and honours the environment', () => {
    expect(resolveStateDir({ HOME: '/home/u' })).toBe('/home/u/.openclaw');
    expect(resolveConfigPath({ HOME: '/home/u' })).toBe('/home/u/.openclaw/openclaw.json');
    expect(resolveStateDir({ HOME: '/home/u', OPENCLAW_PROFILE: 'work' })).toBe('/home/u/.openclaw-work');
    expect(resolveStateDir({ HOME: '/home/u', OPENCLAW_PROFILE: 'default' })).toBe('/home/u/.openclaw');
    expect(resolveConfigPath({ HOME: '/home/u', OPENCLAW_STATE_DIR: '/srv/claw' })).toBe('/srv/claw/openclaw.json');
    expect(
      resolveConfigPath({ HOME: '/home/u', OPENCLAW_STATE_DIR: '/srv/claw', OPENCLAW_CONFIG_PATH: '~/c.json5' }),
    ).toBe('/home/u/c.json5');
    expect(() => resolveStateDir({ HOME: '/h', OPENCLAW_PROFILE: '../escape' })).toThrow(/not a valid profile name/);
  });
});

describe('reading config', () => {
  it('parses JSON5 (comments, unquoted keys, trailing commas) and substitutes ${VAR}', () => {
    const dir = tempDir();
    const file = join(dir, 'openclaw.json');
    writeFileSync(
      file,
      `// my config
      { agents: { defaults: { workspace: "\${WS}/work", maxConcurrent: 2, }, },
        plugins: { entries: { x: { config: { literal: "$\${NOT_A_VAR}", key: "pre-\${KEY}-post" } } } } }`,
    );
    const snapshot = readConfigFile(file, { WS: '/data', KEY: 'k1' });
    expect(snapshot.exists).toBe(true);
    expect(snapshot.issues).toEqual([]);
    expect(getPath(snapshot.resolved, ['agents', 'defaults', 'workspace'])).toBe('/data/work');
    expect(getPath(snapshot.resolved, ['plugins', 'entries', 'x', 'config'])).toEqual({
      literal: '${NOT_A_VAR}',
      key: 'pre-k1-post',
    });
    // The raw form keeps the references, so writing it back never bakes in secrets.
    expect(getPath(snapshot.raw, ['agents', 'defaults', 'workspace'])).toBe('${WS}/work');
  });

  it('treats a missing file as empty config', () => {
    const snapshot = readConfigFile(join(tempDir(), 'nope.json'), {});
    expect(snapshot).toMatchObject({ exists: false, raw: {}, issues: [] });
  });
});

describe('invalid config: every bad path, a one-line reason and the owner', () => {
  it('1. JSON5 syntax error names the file, line and column', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'openclaw.json'), '{\n  plugins: {\n    allow: [,]\n  }\n}');
    const error = await createKernel({
      policy: clawPolicy,
      configWriter,
      stateDir: dir,
      env: {},
      logger: silentLogger,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(/openclaw\.json:3:\d+: invalid JSON5/);
  });

  it('2. a kernel setting of the wrong type, and 3. an unknown top-level section', async () => {
    const kernel = await createTestKernel({
      config: { agents: { defaults: { maxConcurrent: 'four' } }, plugins: { allow: 'x' }, gatway: { port: 1 } },
    }).catch((e: unknown) => e);
    expect(kernel).toBeInstanceOf(ConfigError);
    const lines = errors([...(kernel as ConfigError).issues]);
    expect(lines).toContain('agents.defaults.maxConcurrent: must be integer');
    expect(lines).toContain('plugins.allow: must be array');

    const loose = await createKernel({
      policy: clawPolicy,
      configWriter,
      config: { gatway: { port: 1 } },
      stateDir: tempDir(),
      env: {},
      logger: silentLogger,
      discover: clawDiscovery(),
    });
    expect(errors(loose.issues())).toEqual(['gatway: is not a known config section (no plugin declares it)']);
  });

  it('4. a plugin config that breaks its schema names the path and the plugin; the plugin fails, others run', async () => {
    const kernel = await createTestKernel({
      plugins: [strictPlugin, { id: 'bystander', register() {} }],
      config: { plugins: { entries: { strict: { config: { token: 5, port: 0, extra: true } } } } },
    });
    expect(errors(kernel.issues())).toEqual([
      'plugins.entries.strict.config.extra: is not a known key (plugin strict)',
      'plugins.entries.strict.config.token: must be string (plugin strict)',
      'plugins.entries.strict.config.port: must be >= 1 (plugin strict)',
    ]);
    expect(kernel.plugins.get('strict')).toMatchObject({ status: 'failed' });
    expect(kernel.plugins.get('strict')!.error).toContain('plugins.entries.strict.config.token: must be string');
    expect(kernel.plugins.get('bystander')).toMatchObject({ status: 'active' });
    await kernel.dispose();
  });

  it('5. a required plugin setting that is missing', async () => {
    const kernel = await createTestKernel({ plugins: [strictPlugin] });
    expect(errors(kernel.issues())).toEqual(['plugins.entries.strict.config.token: is required (plugin strict)']);
    await kernel.dispose();
  });

  it('6. a ${VAR} reference to an unset variable: a warning naming it, and the setting left out', async () => {
    const kernel = await createTestKernel({
      config: {
        agents: { defaults: { workspace: '${NO_SUCH_VAR}/ws', userTimezone: '${TZ_FOR_TEST}' } },
        plugins: { allow: ['${NO_SUCH_PLUGIN}', 'kept'] },
      },
      env: { TZ_FOR_TEST: 'Europe/Lisbon' },
    });
    expect(errors(kernel.issues())).toEqual([]);
    expect(
      kernel
        .issues()
        .filter((issue) => issue.level === 'warning' && issue.message.includes('not set in the environment'))
        .map((issue) => `${issue.path}: ${issue.message}`),
    ).toEqual([
      'agents.defaults.workspace: references ${NO_SUCH_VAR}, which is not set in the environment; left out, so what uses it is unavailable until NO_SUCH_VAR is set',
      'plugins.allow[0]: references ${NO_SUCH_PLUGIN}, which is not set in the environment; left out, so what uses it is unavailable until NO_SUCH_PLUGIN is set',
    ]);
    const agents = kernel.config.resolved.agents as { defaults: Record<string, unknown> };
    expect(agents.defaults.workspace).toBeUndefined();
    expect(agents.defaults.userTimezone).toBe('Europe/Lisbon');
    expect(kernel.config.resolved.plugins?.allow).toEqual(['kept']);
    await kernel.dispose();
  });

  it('7. a slot pointing at a plugin that is not installed, or that is not of that kind', async () => {
    const kernel = await createTestKernel({
      plugins: [{ id: 'not-memory', register() {} }],
      config: { plugins: { slots: { memory: 'ghost', agentLoop: 'not-memory' } } },
    });
    expect(errors(kernel.issues())).toEqual([
      'plugins.slots.memory: no plugin "ghost" is installed',
      'plugins.slots.agentLoop: plugin "not-memory" does not declare kind "agentLoop"',
    ]);
    await kernel.dispose();
  });

  it('applies schema defaults to plugin config and validates owned top-level sections', async () => {
    const root = tempDir();
    writePlugin(join(root, 'svc'), {
      manifest: {
        id: 'svc',
        configSchema: EMPTY_SCHEMA,
        configSections: {
          service: {
            type: 'object',
            additionalProperties: false,
            properties: { port: { type: 'integer', default: 18789 } },
          },
        },
      },
      code: 'export default { register(api) { globalThis.__svcSection = api.section("service"); } };',
    });
    const good = await createTestKernel({ plugins: [join(root, 'svc')], config: {} });
    expect(good.issues()).toEqual([]);
    await good.plugins.activate('svc');
    expect((globalThis as Record<string, unknown>).__svcSection).toEqual({ port: 18789 });
    const bad = await createTestKernel({ plugins: [join(root, 'svc')], config: { service: { port: 'x', host: 1 } } });
    expect(errors(bad.issues())).toEqual([
      'service.host: is not a known key (plugin svc)',
      'service.port: must be integer (plugin svc)',
    ]);
    await good.dispose();
    await bad.dispose();
  });

  it('8. a misspelt agent or logging key is an error naming it; an OpenClaw key claw does not implement is a warning', async () => {
    const config = {
      agents: {
        defaults: {
          thinkingDefalt: 'high',
          imageModel: 'openai/gpt-image-1',
          compaction: { reserveTokensFloor: 0 },
          contextPruning: { mode: 'cache-ttl', ttl: '5m' },
        },
        list: [{ id: 'main', thinkingDefault: 'high', timeoutSecs: 30, fastModeDefault: true }],
      },
      logging: { level: 'debug', redactPaterns: ['x'] },
    };
    // compaction and contextPruning are the agent loop's keys, blockStreaming* the agent's: declared in their manifests.
    const plugins = [bundledPluginDir('agent-loop'), bundledPluginDir('agent')];
    const error = await createTestKernel({ config, plugins }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    const issues = [...(error as ConfigError).issues];
    expect(errors(issues).sort()).toEqual([
      'agents.defaults.compaction.reserveTokensFloor: must be >= 1 (plugin agent-loop)',
      'agents.defaults.thinkingDefalt: is not a known key',
      'logging.redactPaterns: is not a known key',
    ]);
    const report = await createKernel({
      policy: clawPolicy,
      configWriter,
      config,
      stateDir: tempDir(),
      env: {},
      logger: silentLogger,
      discover: clawDiscovery({ pluginDirs: plugins }),
      strictConfig: false,
    });
    expect(errors(report.issues()).sort()).toEqual(errors(issues).sort());
    const warned = report
      .issues()
      .filter((issue) => issue.level === 'warning')
      .map((issue) => `${issue.path}: ${issue.message}`)
      .sort();
    // OpenClaw's docs allow any key on an agent entry, so a misspelt one there is reported, as a warning.
    expect(warned).toEqual([
      `agents.defaults.imageModel: ${IGNORED_OPENCLAW_KEY}`,
      `agents.list[0].fastModeDefault: ${IGNORED_OPENCLAW_KEY}`,
      `agents.list[0].timeoutSecs: ${IGNORED_OPENCLAW_KEY}`,
      `logging.level: ${IGNORED_OPENCLAW_KEY}`,
    ]);
    // Every setting the agent loop reads is accepted where it reads it.
    const fine = await createTestKernel({
      plugins,
      config: {
        agents: {
          defaults: {
            model: { primary: 'openai/gpt-4.1', fallbacks: ['anthropic/claude'] },
            models: { 'openai/gpt-4.1': { alias: 'gpt' } },
            timeoutSeconds: 60,
            bootstrapMaxChars: 1000,
            userTimezone: 'Europe/Berlin',
            thinkingDefault: 'low',
            contextTokens: 8000,
            toolResultMaxChars: 5000,
            compaction: {
              reserveTokensFloor: 1000,
              keepRecentTokens: 2000,
              memoryFlush: { enabled: false, softThresholdTokens: 100, systemPrompt: 's', prompt: 'p' },
            },
            contextPruning: {
              mode: 'cache-ttl',
              ttl: '5m',
              keepLastAssistants: 2,
              softTrimRatio: 0.2,
              hardClearRatio: 0.4,
              minPrunableToolChars: 10,
              softTrim: { maxChars: 10, headChars: 4, tailChars: 4 },
              hardClear: { enabled: true, placeholder: '…' },
              tools: { deny: ['exec'] },
            },
            blockStreamingDefault: 'on',
            blockStreamingChunk: { minChars: 100, maxChars: 200 },
          },
          list: [
            {
              id: 'main',
              model: 'openai/gpt-4.1',
              models: { 'openai/gpt-4.1': { alias: 'g' } },
              timeoutSeconds: 30,
              thinkingDefault: 'high',
              userTimezone: 'UTC',
              contextTokens: 4000,
              bootstrapMaxChars: 10,
              toolResultMaxChars: 10,
            },
          ],
        },
      },
    });
    expect(fine.issues()).toEqual([]);
    await fine.dispose();
  });

  it('9. a third-party plugin contributes a per-agent key from its manifest: it validates on or off, and a key under it that it does not declare is an error naming it', async () => {
    const root = tempDir();
    writePlugin(join(root, 'notes'), {
      manifest: {
        id: 'notes',
        configSchema: EMPTY_SCHEMA,
        configContributions: {
          agents: {
            notes: {
              type: 'object',
              additionalProperties: false,
              properties: { digest: { type: 'string', enum: ['daily', 'weekly'] } },
            },
          },
          tools: {
            notes: {
              type: 'object',
              additionalProperties: false,
              properties: { maxItems: { type: 'integer', minimum: 1 } },
            },
          },
        },
      },
      // Never run: validation reads the manifest only.
      code: 'throw new Error("the notes plugin was loaded");',
    });
    const plugins = [join(root, 'notes')];
    const valid = {
      agents: { defaults: { notes: { digest: 'daily' } }, list: [{ id: 'main', notes: { digest: 'weekly' } }] },
      tools: { notes: { maxItems: 3 } },
    };
    const good = await createTestKernel({ plugins, config: valid });
    expect(good.issues()).toEqual([]);
    const schema = composeConfigSchema(good.plugins.list()) as { properties: Record<string, any> };
    expect(schema.properties.agents.properties.defaults.properties.notes.properties.digest.enum).toEqual([
      'daily',
      'weekly',
    ]);
    expect(schema.properties.agents.properties.list.items.properties.notes.additionalProperties).toBe(false);
    expect(schema.properties.tools.properties.notes.properties.maxItems.minimum).toBe(1);
    await good.dispose();

    const bad = {
      agents: { defaults: { notes: { digest: 'hourly' } }, list: [{ id: 'main', notes: { digets: 'weekly' } }] },
      tools: { notes: { maxItems: 0 } },
    };
    const error = await createTestKernel({ plugins, config: bad }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(errors([...(error as ConfigError).issues]).sort()).toEqual([
      'agents.defaults.notes.digest: must be one of "daily", "weekly" (plugin notes)',
      'agents.list[0].notes.digets: is not a known key (plugin notes)',
      'tools.notes.maxItems: must be >= 1 (plugin notes)',
    ]);

    // Off, the plugin's keys still validate (OpenClaw checks installed plugins' config) and are named as unused.
    const off = await createTestKernel({
      plugins,
      config: { ...valid, plugins: { entries: { notes: { enabled: false } } } },
    });
    expect(errors(off.issues())).toEqual([]);
    expect(off.issues().map(formatIssue)).toContain(
      'agents.defaults.notes: belongs to plugin "notes", which is off (plugins.entries.notes.enabled is false); kept but unused (plugin notes)',
    );
    await off.dispose();

    // Not installed: nobody declares the key (on an agent entry, where OpenClaw allows any key, that is a warning).
    const missing = await createTestKernel({ config: valid }).catch((e: unknown) => e);
    expect(errors([...(missing as ConfigError).issues])).toEqual(['agents.defaults.notes: is not a known key']);
  });

  it('10. keys several plugins contribute are merged: tools.web.fetch (web-fetch) and tools.web.search (web-search) make one closed tools.web', async () => {
    const plugins = [bundledPluginDir('web-fetch'), bundledPluginDir('web-search')];
    const config = { tools: { web: { fetch: { maxChars: 500 }, search: { maxResults: 3 } } } };
    const good = await createTestKernel({ plugins, config });
    expect(good.issues()).toEqual([]);
    await good.dispose();
    const error = await createTestKernel({
      plugins,
      config: { tools: { web: { fetch: { maxChars: 5 }, serach: {} } } },
    }).catch((e: unknown) => e);
    expect(errors([...(error as ConfigError).issues]).sort()).toEqual([
      'tools.web.fetch.maxChars: must be >= 100 (plugin web-fetch, web-search)',
      'tools.web.serach: is not a known key (plugin web-fetch, web-search)',
    ]);
    // With web-search alone, tools.web.fetch is nobody's: an OpenClaw key claw then does not implement.
    const alone = await createTestKernel({ plugins: [bundledPluginDir('web-search')], config });
    expect(alone.issues().map(formatIssue)).toEqual([`tools.web.fetch: ${IGNORED_OPENCLAW_KEY} (plugin web-search)`]);
    await alone.dispose();
  });

  it('warns about stale references instead of failing', async () => {
    const kernel = await createTestKernel({
      config: { plugins: { entries: { gone: { enabled: true } }, deny: ['gone-too'] } },
    });
    expect(kernel.issues()).toEqual([
      {
        level: 'warning',
        path: 'plugins.entries.gone',
        message: 'refers to unknown plugin "gone"; stale entry ignored',
        owner: 'kernel',
      },
      {
        level: 'warning',
        path: 'plugins.deny[0]',
        message: 'refers to unknown plugin "gone-too"; stale entry ignored',
        owner: 'kernel',
      },
    ]);
    await kernel.dispose();
  });
});

describe('writing config', () => {
  it('writes atomically (temp file + rename), keeps a .bak, and leaves no temp files', () => {
    const dir = tempDir();
    const file = join(dir, 'openclaw.json');
    writeConfigFile(file, { a: 1 });
    writeConfigFile(file, { a: 2 });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ a: 2 });
    expect(JSON.parse(readFileSync(`${file}.bak`, 'utf8'))).toEqual({ a: 1 });
    expect(readdirSync(dir).sort()).toEqual(['openclaw.json', 'openclaw.json.bak']);
  });

  it('a writer that dies before the rename leaves the old file intact', () => {
    // Simulates a crash: the temp file is written, the rename never happens.
    const dir = tempDir();
    const file = join(dir, 'openclaw.json');
    writeConfigFile(file, { stable: true });
    writeFileSync(join(dir, '.openclaw.json.12345.deadbeef.tmp'), '{"half": ');
    expect(readConfigFile(file, {}).resolved).toEqual({ stable: true });
    expect(existsSync(file)).toBe(true);
  });
});

describe('config paths and redaction', () => {
  it('parses dotted and bracketed paths and edits objects', () => {
    expect(parsePath('plugins.entries["my.plugin"].config')).toEqual(['plugins', 'entries', 'my.plugin', 'config']);
    expect(parsePath('agents.list[0].id')).toEqual(['agents', 'list', 0, 'id']);
    expect(() => parsePath('a..b')).toThrow(/empty segment/);
    expect(() => parsePath('a[x')).toThrow(/unclosed/);
    const root: Record<string, unknown> = {};
    setPath(root, ['a', 'b', 0, 'c'], 1);
    expect(root).toEqual({ a: { b: [{ c: 1 }] } });
    expect(() => setPath(root, ['__proto__', 'polluted'], 1)).toThrow(/not allowed/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    setPath(root, ['x', 'y'], 2);
    expect(unsetPath(root, ['x', 'y'])).toBe(true);
    expect(root).not.toHaveProperty('x');
    expect(unsetPath(root, ['x', 'y'])).toBe(false);
  });

  it('redacts secrets wherever config is shown', () => {
    const shown = redactConfig(
      {
        gateway: { auth: { token: 'abc', password: 'pw' }, port: 1 },
        models: { openai: { apiKey: 'sk-1', maxTokens: 4096 } },
        channels: { telegram: { botToken: 'tg', webhookSecret: 's', credentials: { a: 'b' } } },
        plugins: { entries: { p: { config: { endpointKey: 'x' } } } },
      },
      (path) => path.join('.') === 'plugins.entries.p.config.endpointKey',
    );
    expect(shown).toEqual({
      gateway: { auth: { token: REDACTED, password: REDACTED }, port: 1 },
      models: { openai: { apiKey: REDACTED, maxTokens: 4096 } },
      channels: { telegram: { botToken: REDACTED, webhookSecret: REDACTED, credentials: { a: REDACTED } } },
      plugins: { entries: { p: { config: { endpointKey: REDACTED } } } },
    });
  });
});
