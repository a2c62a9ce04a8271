import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sdkAliases } from '../sdk/aliases.js';
import { definePlugin, errorResult, jsonResult, textResult } from '../sdk/index.js';
import { createTestKernel } from '../sdk/testing.js';
import { REPO, tempDir, writePlugin } from './helpers.js';

const CLOCK = join(REPO, 'plugins', 'example-clock');
const GUARD = join(REPO, 'plugins', 'example-guard');

describe('SDK', () => {
  it('definePlugin gives a typed register(api); the test kit boots a kernel with exactly that plugin', async () => {
    const counter = definePlugin<{ start: number }>({
      id: 'counter',
      configSchema: { type: 'object', properties: { start: { type: 'integer', default: 10 } } },
      register(api) {
        let value = api.config.start;
        api.registerTool({
          name: 'count',
          description: 'Counts up',
          parameters: { type: 'object', properties: {} },
          execute: () => textResult(String(++value)),
        });
        api.on('message_sending', (event) => ({ content: `${event.content} #${value}` }));
      },
    });
    const kernel = await createTestKernel({ plugins: [counter] });
    expect(kernel.plugins.list().map((record) => record.id)).toEqual(['counter']);
    expect(await kernel.runTool('count')).toEqual(textResult('11'));
    expect(await kernel.hooks.runModifying('message_sending', { to: 'u', content: 'hi' })).toEqual({
      content: 'hi #11',
    });
    await kernel.dispose();
  });

  it('builds tool results', () => {
    expect(textResult('t', { a: 1 })).toEqual({ content: [{ type: 'text', text: 't' }], details: { a: 1 } });
    expect(jsonResult({ a: 1 })).toEqual({ content: [{ type: 'text', text: '{\n  "a": 1\n}' }], details: { a: 1 } });
    expect(errorResult('nope')).toEqual({ content: [{ type: 'text', text: 'nope' }], isError: true });
  });
});

describe('bundled example plugins', () => {
  it('example-clock: the clock_now tool and /time command use the configured zone', async () => {
    const kernel = await createTestKernel({
      plugins: [CLOCK],
      config: { plugins: { entries: { 'example-clock': { config: { timezone: 'Asia/Tokyo' } } } } },
    });
    const result = await kernel.runTool('clock_now');
    expect(result.isError).toBeUndefined();
    expect(result.details).toMatchObject({ timeZone: 'Asia/Tokyo' });
    expect(Date.parse((result.details as { iso: string }).iso)).toBeGreaterThan(Date.now() - 60_000);
    const paris = await kernel.runTool('clock_now', { timezone: 'Europe/Paris' });
    expect(paris.details).toMatchObject({ timeZone: 'Europe/Paris' });
    expect(await kernel.runTool('clock_now', { timezone: 'Mars/Olympus' })).toEqual(
      errorResult('"Mars/Olympus" is not a known time zone'),
    );
    const time = await kernel.capabilities.get('command', 'time');
    expect(await time.handler({ args: 'Nowhere/Land' })).toEqual({ text: 'Unknown time zone "Nowhere/Land".' });
    await kernel.dispose();
  });

  it('example-clock: rejects a config that does not fit its schema', async () => {
    const kernel = await createTestKernel({
      plugins: [CLOCK],
      config: { plugins: { entries: { 'example-clock': { config: { timezone: '', color: 'red' } } } } },
    });
    expect(kernel.plugins.get('example-clock')!.status).toBe('failed');
    expect(kernel.issues().map((issue) => issue.path)).toEqual([
      'plugins.entries.example-clock.config.color',
      'plugins.entries.example-clock.config.timezone',
    ]);
    await kernel.dispose();
  });

  it('example-guard: blocks listed tools and masks patterns in outgoing messages', async () => {
    const kernel = await createTestKernel({
      plugins: [GUARD],
      config: {
        plugins: {
          entries: {
            'example-guard': { config: { blockTools: ['exec'], maskPatterns: ['sk-[a-z0-9]+'], mask: '***' } },
          },
        },
      },
    });
    expect(await kernel.hooks.runModifying('before_tool_call', { toolName: 'exec', params: { cmd: 'rm' } })).toEqual({
      block: true,
      blockReason: 'tool "exec" is blocked by example-guard',
    });
    expect(await kernel.hooks.runModifying('before_tool_call', { toolName: 'read', params: {} })).toEqual({});
    expect(await kernel.hooks.runModifying('message_sending', { to: 'u', content: 'key sk-abc123 and sk-zz' })).toEqual(
      {
        content: 'key *** and ***',
      },
    );
    expect(await kernel.hooks.runModifying('message_sending', { to: 'u', content: 'sk-abc' })).toEqual({
      content: '***',
    });
    await kernel.dispose();
  });

  it('example-guard: a bad pattern fails the plugin with the reason', async () => {
    const kernel = await createTestKernel({
      plugins: [GUARD],
      config: { plugins: { entries: { 'example-guard': { config: { maskPatterns: ['(unclosed'] } } } } },
    });
    await kernel.hooks.runModifying('message_sending', { to: 'u', content: 'x' });
    expect(kernel.plugins.get('example-guard')!.error).toMatch(
      /^register\(\) threw: maskPatterns: "\(unclosed" is not a valid regular expression/,
    );
    await kernel.dispose();
  });
});

describe('the package surface for plugin authors', () => {
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
    name: string;
    bin: Record<string, string>;
    exports: Record<string, string>;
  };

  it('is @claw-assistant/claw (the npm name `claw` is another package), exporting the SDK subpaths and not the kernel', () => {
    expect(pkg.name).toBe('@claw-assistant/claw');
    expect(Object.keys(pkg.bin)).toEqual(['claw']);
    expect(Object.keys(pkg.exports).sort()).toEqual(
      [
        './package.json',
        './sdk',
        './sdk/agent',
        './sdk/agent/provider-contract',
        './sdk/channels',
        './sdk/channels/contract',
        './sdk/cli',
        './sdk/config',
        './sdk/exec',
        './sdk/memory',
        './sdk/memory/contract',
        './sdk/net',
        './sdk/plugin',
        './sdk/sandbox',
        './sdk/services',
        './sdk/sqlite',
        './sdk/sessions',
        './sdk/testing',
        './sdk/tts',
        './sdk/web-search',
      ].sort(),
    );
    for (const target of Object.values(pkg.exports)) {
      expect(existsSync(join(REPO, target)), target).toBe(true);
      // The host (policy wiring, loader, caches, config writes) is claw's own, not author surface.
      expect(target, target).not.toMatch(/^\.\/dist\/(host|kernel)\//);
    }
  });

  it('maps the same subpaths for third-party plugins, under the package name and the legacy `claw/…`', () => {
    const aliases = sdkAliases();
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (subpath === './package.json') continue;
      const module = target.replace(/^\.\/dist\//, '').replace(/\.js$/, '');
      for (const name of ['@claw-assistant/claw', 'claw']) {
        expect(
          relative(REPO, aliases[`${name}/${subpath.slice(2)}`]!).replace(/\.(ts|js)$/, ''),
          `${name}/${subpath.slice(2)}`,
        ).toBe(module);
      }
    }
  });

  it('keeps vitest out of every subpath but the contract suites', () => {
    const reaches = (file: string, seen = new Set<string>()): boolean => {
      if (seen.has(file)) return false;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      if (/from\s+['"]vitest['"]|import\(\s*['"]vitest['"]/.test(text)) return true;
      // Static value imports only (dynamic ones load on use); the built files have no type imports left.
      const specs = [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+['"](\.[^'"]+)['"]/gm)].map(
        (match) => match[1]!,
      );
      return specs.some((spec) => reaches(resolve(dirname(file), spec), seen));
    };
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (subpath === './package.json') continue;
      expect(reaches(join(REPO, target)), subpath).toBe(/contract/.test(subpath));
    }
  });

  it('a TypeScript plugin imports ChannelSendError and defineMemoryPlugin by either name', async () => {
    const root = tempDir();
    writePlugin(join(root, 'author'), {
      manifest: { id: 'author', configSchema: { type: 'object' }, tools: ['probe'] },
      entryFile: 'index.ts',
      code: `
        import { definePlugin, textResult } from '@claw-assistant/claw/sdk';
        import { ChannelSendError } from '@claw-assistant/claw/sdk/channels';
        import { defineMemoryPlugin } from 'claw/sdk/memory';
        export default definePlugin({
          id: 'author',
          register(api) {
            api.registerTool({ name: 'probe', description: 'p', parameters: { type: 'object' },
              execute: () => textResult(new ChannelSendError('x', { retryAfterMs: 5 }).retryable + ' ' + typeof defineMemoryPlugin) });
          },
        });`,
    });
    const kernel = await createTestKernel({ plugins: [join(root, 'author')] });
    expect(await kernel.runTool('probe')).toEqual(textResult('true function'));
    await kernel.dispose();
  });
});
