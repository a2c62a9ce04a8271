import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileIdentity, MANIFEST_REGISTRY, MAX_MANIFEST_BYTES, manifestKey, readManifest } from '../host/manifest.js';
import { createTestKernel } from '../sdk/testing.js';
import { EMPTY_SCHEMA, REPO, tempDir, writePlugin } from './helpers.js';

const CODE = 'export default { register() {} };';

function check(manifest: Record<string, unknown> | string, extra: Partial<Parameters<typeof writePlugin>[1]> = {}) {
  const dir = writePlugin(join(tempDir(), 'p'), { manifest, code: CODE, ...extra });
  return readManifest(dir);
}

function errorOf(result: ReturnType<typeof readManifest>): string {
  if (result.ok) throw new Error('expected the manifest to be rejected');
  return result.error;
}

describe('manifest validation', () => {
  it('accepts a minimal manifest and JSON5 syntax, and finds the entry', () => {
    const result = check(`{
      // comments are fine
      id: "minimal",
      configSchema: { type: "object", additionalProperties: false, },
    }`);
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.manifest.id).toBe('minimal');
      expect(result.entryPath.endsWith('index.js')).toBe(true);
      expect(result.warnings).toEqual([]);
    }
  });

  it('1. rejects a missing id', () => {
    expect(errorOf(check({ configSchema: EMPTY_SCHEMA }))).toBe('openclaw.plugin.json: id: is required');
  });

  it('2. rejects a missing configSchema', () => {
    expect(errorOf(check({ id: 'x' }))).toBe('openclaw.plugin.json: configSchema: is required');
  });

  it('3. rejects an id with characters that are not allowed', () => {
    expect(errorOf(check({ id: 'Bad Id!', configSchema: EMPTY_SCHEMA }))).toBe(
      'openclaw.plugin.json: id: must match pattern "^[a-z0-9][a-z0-9._-]*$"',
    );
  });

  it('4. rejects capability lists of the wrong type and unknown hooks or kinds', () => {
    expect(errorOf(check({ id: 'x', configSchema: EMPTY_SCHEMA, tools: 'clock' }))).toBe(
      'openclaw.plugin.json: tools: must be array',
    );
    expect(errorOf(check({ id: 'x', configSchema: EMPTY_SCHEMA, hooks: ['before_everything'] }))).toMatch(
      /^openclaw\.plugin\.json: hooks\[0\]: must be one of "message_received", "before_model_resolve", .*"before_install"$/,
    );
    expect(errorOf(check({ id: 'x', configSchema: EMPTY_SCHEMA, kind: 'brain' }))).toBe(
      'openclaw.plugin.json: kind: does not match any allowed shape',
    );
  });

  it('5. rejects text that is not JSON5, naming line and column', () => {
    expect(errorOf(check('{ "id": "x", configSchema: { } '))).toMatch(
      /^openclaw\.plugin\.json:1:\d+: invalid JSON5: invalid end of input/,
    );
    expect(errorOf(check('[1, 2]'))).toBe('openclaw.plugin.json must contain a JSON object');
  });

  it('6. rejects a configSchema that is not a JSON Schema', () => {
    expect(errorOf(check({ id: 'x', configSchema: { type: 'objekt' } }))).toMatch(
      /^openclaw\.plugin\.json: configSchema is not a valid JSON Schema: type: /,
    );
  });

  it('7. rejects an entry that leaves the plugin directory, directly or through a symlink', () => {
    expect(errorOf(check({ id: 'x', configSchema: EMPTY_SCHEMA, entry: '../outside.js' }))).toBe(
      'openclaw.plugin.json: entry "../outside.js" points outside the plugin directory',
    );
    expect(errorOf(check({ id: 'x', configSchema: EMPTY_SCHEMA, entry: '/etc/passwd' }))).toBe(
      'openclaw.plugin.json: entry "/etc/passwd" must be a path relative to the plugin directory',
    );
    const outside = join(tempDir(), 'evil.js');
    writeFileSync(outside, CODE);
    const dir = writePlugin(join(tempDir(), 'p'), {
      manifest: { id: 'x', configSchema: EMPTY_SCHEMA, entry: './link.js' },
    });
    symlinkSync(outside, join(dir, 'link.js'));
    expect(errorOf(readManifest(dir))).toBe(
      'openclaw.plugin.json: entry "./link.js" resolves outside the plugin directory',
    );
    // Through a chain: x/y/top → ../.. is the plugin dir, so x/y/top/.. is the folder above it (a decoy
    // x/y/evil.js is where Node's own realpath, folding "top/.." first, would look).
    const chained = writePlugin(join(tempDir(), 'p'), {
      manifest: { id: 'x', configSchema: EMPTY_SCHEMA, entry: './main.js' },
    });
    mkdirSync(join(chained, 'x', 'y'), { recursive: true });
    symlinkSync('../..', join(chained, 'x', 'y', 'top'));
    writeFileSync(join(chained, 'x', 'y', 'evil.js'), CODE);
    writeFileSync(join(chained, '..', 'evil.js'), CODE);
    symlinkSync('x/y/top/../evil.js', join(chained, 'main.js'));
    expect(errorOf(readManifest(chained))).toBe(
      'openclaw.plugin.json: entry "./main.js" resolves outside the plugin directory',
    );
  });

  it('8. rejects a missing entry file, and a directory with no manifest', () => {
    expect(errorOf(check({ id: 'x', configSchema: EMPTY_SCHEMA, entry: './dist/index.js' }))).toBe(
      'openclaw.plugin.json: entry file "./dist/index.js" not found',
    );
    const empty = join(tempDir(), 'empty');
    mkdirSync(empty);
    expect(errorOf(readManifest(empty))).toBe('openclaw.plugin.json not found');
  });

  it('reads the OpenClaw package.json entry and warns about unknown fields', () => {
    const result = check(
      { id: 'oc', configSchema: EMPTY_SCHEMA, contracts: { tools: ['x'] }, madeUpField: 1 },
      {
        entryFile: 'src/main.js',
        files: { 'package.json': JSON.stringify({ openclaw: { extensions: ['./src/main.js'] } }) },
      },
    );
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.entryPath.endsWith(join('src', 'main.js'))).toBe(true);
      expect(result.warnings).toEqual(['unknown manifest field "madeUpField" ignored']);
    }
  });

  it('9. refuses a manifest over the size cap before reading it, naming the file and the cap', () => {
    expect(MAX_MANIFEST_BYTES).toBe(256 * 1024);
    // Valid JSON, just over the cap: it would parse and load, so only the cap refuses it.
    const padded = { id: 'big', configSchema: EMPTY_SCHEMA, description: 'x'.repeat(MAX_MANIFEST_BYTES) };
    const dir = writePlugin(join(tempDir(), 'big'), { manifest: padded, code: CODE });
    const file = join(dir, 'openclaw.plugin.json');
    expect(errorOf(readManifest(dir))).toBe(`${file} is over the 256 KiB manifest cap`);
    // 60 MB (sparse: no disk used) is refused the same way, by its size alone.
    truncateSync(file, 60 * 1024 * 1024);
    expect(errorOf(readManifest(dir))).toBe(`${file} is over the 256 KiB manifest cap`);
    // A manifest at the cap is read as before.
    const fits = { id: 'fits', configSchema: EMPTY_SCHEMA, description: '' };
    const fitting = JSON.stringify({
      ...fits,
      description: 'x'.repeat(MAX_MANIFEST_BYTES - JSON.stringify(fits).length),
    });
    expect(fitting.length).toBe(MAX_MANIFEST_BYTES);
    expect(check(fitting).ok).toBe(true);
  });

  it('10. takes no entry from a package.json over the cap', () => {
    const pkg = { openclaw: { extensions: ['./src/main.js'] }, padding: 'x'.repeat(MAX_MANIFEST_BYTES) };
    const files = { 'package.json': JSON.stringify(pkg) };
    const result = check({ id: 'x', configSchema: EMPTY_SCHEMA }, { entryFile: 'src/main.js', files });
    expect(errorOf(result)).toMatch(/^openclaw\.plugin\.json: no entry module/);
  });

  it('marks plugins with broken manifests failed in the host, and keeps the rest working', async () => {
    const root = tempDir();
    writePlugin(join(root, 'broken'), { manifest: '{ "id": "broken", "configSchema": 3 }', code: CODE });
    writePlugin(join(root, 'fine'), {
      manifest: { id: 'fine', configSchema: EMPTY_SCHEMA, tools: ['ok'] },
      code: `
      export default { register(api) {
        api.registerTool({ name: 'ok', description: 'ok', parameters: { type: 'object' }, execute: () => ({ content: [{ type: 'text', text: 'ok' }] }) });
      } };`,
    });
    const huge = writePlugin(join(root, 'huge'), { manifest: { id: 'huge', configSchema: EMPTY_SCHEMA }, code: CODE });
    truncateSync(join(huge, 'openclaw.plugin.json'), 60 * 1024 * 1024);
    const kernel = await createTestKernel({ plugins: [join(root, 'broken'), join(root, 'fine'), huge] });
    expect(kernel.plugins.get('broken')).toMatchObject({
      status: 'failed',
      error: 'openclaw.plugin.json: configSchema: must be object',
    });
    const error = `${join(huge, 'openclaw.plugin.json')} is over the 256 KiB manifest cap`;
    expect(kernel.plugins.get('huge')).toMatchObject({ status: 'failed', error });
    expect(await kernel.runTool('ok')).toEqual({ content: [{ type: 'text', text: 'ok' }] });
    await kernel.dispose();
  });
});

describe('the build-time manifest registry (bundled plugins)', () => {
  const root = () => {
    const dir = tempDir();
    const plugin = writePlugin(join(dir, 'p'), { manifest: { id: 'p', configSchema: EMPTY_SCHEMA }, code: CODE });
    return { dir, plugin };
  };
  const register = (dir: string, plugin: string, result: unknown, key = manifestKey(plugin), identity?: string) =>
    writeFileSync(join(dir, MANIFEST_REGISTRY), JSON.stringify({ plugins: { p: { key, identity, result } } }));

  it('the dist build records every bundled plugin exactly as a fresh read finds it', () => {
    const bundled = join(REPO, 'dist', 'plugins');
    const registry = JSON.parse(readFileSync(join(bundled, MANIFEST_REGISTRY), 'utf8')) as {
      plugins: Record<string, { key: string }>;
    };
    const ids = readdirSync(bundled).filter((name) => existsSync(join(bundled, name, 'openclaw.plugin.json')));
    expect(Object.keys(registry.plugins).sort()).toEqual(ids.sort());
    for (const id of ids) {
      const dir = join(bundled, id);
      expect(registry.plugins[id]!.key, id).toBe(manifestKey(dir));
      expect(readManifest(dir, { bundled: true }), id).toEqual(readManifest(dir));
    }
  });

  it('is used for a bundled directory whose files match, and only then', () => {
    const { dir, plugin } = root();
    const recorded = {
      ok: true,
      manifest: { id: 'p', name: 'from the registry' },
      entryPath: 'index.js',
      warnings: [],
    };
    register(dir, plugin, recorded);
    const known = readManifest(plugin, { bundled: true });
    expect(known).toMatchObject({
      ok: true,
      manifest: { name: 'from the registry' },
      entryPath: join(plugin, 'index.js'),
    });
    // Not a bundled root: the registry is not consulted.
    expect(readManifest(plugin)).toMatchObject({ ok: true, manifest: { id: 'p' } });
    expect((readManifest(plugin) as { manifest: { name?: string } }).manifest.name).toBeUndefined();
    // The manifest changed since the build: read and checked again (and refused here).
    writeFileSync(join(plugin, 'openclaw.plugin.json'), JSON.stringify({ id: 'p' }));
    expect(errorOf(readManifest(plugin, { bundled: true }))).toMatch(/configSchema/);
  });

  it('trusts files the build saw without reading them, and gives each boot its own copy', () => {
    const { dir, plugin } = root();
    const recorded = { ok: true, manifest: { id: 'p', name: 'recorded' }, entryPath: 'index.js', warnings: [] };
    // Same inode, size and times as at the build: the (here deliberately wrong) hash is not needed.
    register(dir, plugin, recorded, 'not-the-hash', fileIdentity(plugin));
    const first = readManifest(plugin, { bundled: true }) as { manifest: { name: string } };
    expect(first.manifest.name).toBe('recorded');
    first.manifest.name = 'changed by the first boot';
    const second = readManifest(plugin, { bundled: true }) as { manifest: { name: string } };
    expect(second.manifest.name).toBe('recorded');
    // Rewritten since (even with the same bytes): the identity differs, the wrong hash does not match.
    writeFileSync(join(plugin, 'openclaw.plugin.json'), readFileSync(join(plugin, 'openclaw.plugin.json')));
    expect(readManifest(plugin, { bundled: true })).toMatchObject({ ok: true, manifest: { id: 'p' } });
    expect((readManifest(plugin, { bundled: true }) as { manifest: { name?: string } }).manifest.name).toBeUndefined();
  });

  it('never lets a recorded entry leave the plugin directory', () => {
    const { dir, plugin } = root();
    register(dir, plugin, { ok: true, manifest: { id: 'p' }, entryPath: '../evil.js', warnings: [] });
    const result = readManifest(plugin, { bundled: true });
    expect(result).toMatchObject({ ok: true, entryPath: join(plugin, 'index.js') });
  });
});
