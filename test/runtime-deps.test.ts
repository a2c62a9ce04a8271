/**
 * On-demand heavy dependencies (host/runtime-deps.ts, the "runtime-deps" service): installed into the state dir from a
 * fake npm registry on 127.0.0.1 with only this machine's binary package; a clear error
 * when the registry is unreachable; an already-resolvable package wins and installs nothing.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensurePluginRuntimeDeps,
  importRuntimeDep,
  locateRuntimeDep,
  packageName,
  RuntimeDepInstallError,
  RuntimeDepMissingError,
  runtimeDepsDir,
  runtimeDepsService,
  type RuntimeDepProgress,
} from '../host/runtime-deps.js';
import { NODE_LLAMA_CPP, type RuntimeDependency } from '../sdk/runtime-deps.js';
import { startFakeRegistry, type FakeRegistry } from './fakes/npm-registry.js';
import { claw, freePort, REPO, tempDir, writePlugin } from './helpers.js';

const HERE = `${process.platform}-${process.arch}`;

/** A heavy package whose optional dependencies are this machine's binary, a GPU variant of it, and a foreign platform's. */
const HEAVY: RuntimeDependency = {
  name: 'fake-heavy',
  version: '^1.0.0',
  platformPackages: { [HERE]: `@fake-heavy/${HERE}`, 'aix-ppc64': '@fake-heavy/aix-ppc64' },
};

function writePackage(dir: string, manifest: Record<string, unknown>, files: Record<string, string> = {}): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** npm isolated from the user's config and cache, pointed at `registry`, no retries. */
function npmEnv(registry: string, root: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    npm_config_registry: registry,
    npm_config_cache: join(root, 'npm-cache'),
    npm_config_userconfig: join(root, 'no-npmrc'),
    npm_config_fetch_retries: '0',
    npm_config_fetch_timeout: '10000',
  };
}

let registry: FakeRegistry;

beforeAll(async () => {
  registry = await startFakeRegistry();
  const src = tempDir('claw-heavy-src-');
  const platforms = {
    [`@fake-heavy/${HERE}`]: '1.0.0',
    [`@fake-heavy/${HERE}-cuda`]: '1.0.0',
    '@fake-heavy/aix-ppc64': '1.0.0',
  };
  registry.publish(
    writePackage(
      join(src, 'main'),
      {
        name: 'fake-heavy',
        version: '1.0.0',
        type: 'module',
        exports: { '.': { import: './index.js' } },
        optionalDependencies: platforms,
      },
      { 'index.js': "export const where = 'state dir';\n" },
    ),
  );
  const [os, cpu] = [process.platform, process.arch];
  registry.publish(
    writePackage(
      join(src, 'here'),
      { name: `@fake-heavy/${HERE}`, version: '1.0.0', os: [os], cpu: [cpu] },
      { 'binary.node': 'x' },
    ),
  );
  // Same os/cpu: npm would install it with optional dependencies on.
  registry.publish(
    writePackage(
      join(src, 'cuda'),
      { name: `@fake-heavy/${HERE}-cuda`, version: '1.0.0', os: [os], cpu: [cpu] },
      { 'binary.node': 'x'.repeat(4096) },
    ),
  );
  registry.publish(
    writePackage(
      join(src, 'aix'),
      { name: '@fake-heavy/aix-ppc64', version: '1.0.0', os: ['aix'], cpu: ['ppc64'] },
      { 'binary.node': 'x' },
    ),
  );
  // A plugin's own dependency in `plugins enable`.
  registry.publish(
    writePackage(
      join(src, 'light'),
      { name: 'fake-light', version: '2.0.0', main: 'index.js' },
      { 'index.js': 'module.exports = { light: true };\n' },
    ),
  );
}, 60_000);

afterAll(() => registry?.close());

describe('on-demand runtime dependencies', () => {
  it('a subpath export is imported from its package (whose main entry may not be importable)', async () => {
    expect(packageName('@modelcontextprotocol/sdk/client/index.js')).toBe('@modelcontextprotocol/sdk');
    expect(packageName('dockerode')).toBe('dockerode');
    const name = '@modelcontextprotocol/sdk/client/index.js';
    expect(locateRuntimeDep(name)).toMatchObject({ source: 'resolved' });
    const mod = await importRuntimeDep<{ Client: unknown }>({ name, version: '^1.32.2' }, { install: false });
    expect(typeof mod.Client).toBe('function');
    // Absent everywhere, it is the package that is missing, named as such.
    const stateDir = join(tempDir('claw-rtd-sub-'), 'state');
    const resolveFrom = join(stateDir, 'nowhere.js');
    await expect(
      importRuntimeDep({ name: 'fake-absent/sub.js', version: '1.0.0' }, { stateDir, resolveFrom, install: false }),
    ).rejects.toThrow(/fake-absent is not installed/);
  });

  it('installs into <stateDir>/runtime-deps with only this machine’s binary package, then imports it', async () => {
    const root = tempDir('claw-rtd-');
    const stateDir = join(root, 'state');
    const resolveFrom = join(root, 'nowhere', 'x.js'); // nothing resolvable from here
    expect(locateRuntimeDep('fake-heavy', { stateDir, resolveFrom })).toBeUndefined();
    const progress: RuntimeDepProgress[] = [];
    const before = registry.requests.length;
    const mod = await importRuntimeDep<{ where: string }>(HEAVY, {
      stateDir,
      resolveFrom,
      env: npmEnv(registry.url, root),
      onProgress: (item) => progress.push(item),
    });
    expect(mod.where).toBe('state dir');

    const dir = runtimeDepsDir(stateDir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const modules = join(dir, 'node_modules');
    expect(
      readdirSync(modules)
        .filter((name) => !name.startsWith('.'))
        .sort(),
    ).toEqual(['@fake-heavy', 'fake-heavy']);
    expect(readdirSync(join(modules, '@fake-heavy'))).toEqual([HERE]);
    // Only two tarballs were downloaded: the package and this platform's binary.
    const tarballs = registry.requests.slice(before).filter((path) => path.endsWith('.tgz'));
    expect(tarballs.sort()).toEqual(
      [`/@fake-heavy/${HERE}/-/${HERE}-1.0.0.tgz`, '/fake-heavy/-/fake-heavy-1.0.0.tgz'].sort(),
    );

    expect(progress.map((item) => item.phase)).toEqual(expect.arrayContaining(['start', 'platform', 'done']));
    expect(progress[0]!.message).toBe(`Installing fake-heavy@^1.0.0 into ${dir}…`);
    expect(progress.find((item) => item.phase === 'platform')!.message).toBe(
      `  adding the ${HERE} binary (@fake-heavy/${HERE}@1.0.0)…`,
    );
    expect(progress.at(-1)!.message).toMatch(
      /^Installed fake-heavy@\^1\.0\.0 in \d+\.\d s \(\d+ MB in .*runtime-deps\)\.$/,
    );

    // A second use finds it in the state dir without npm.
    const again = registry.requests.length;
    expect(locateRuntimeDep('fake-heavy', { stateDir, resolveFrom })).toMatchObject({ source: 'state' });
    expect(
      await importRuntimeDep<{ where: string }>(HEAVY, {
        stateDir,
        resolveFrom,
        env: npmEnv('http://127.0.0.1:9/', root),
      }),
    ).toBe(mod);
    expect(registry.requests.length).toBe(again);
  }, 120_000);

  it('says plainly when the registry cannot be reached: package, registry, retry command, no stack', async () => {
    const root = tempDir('claw-rtd-');
    const stateDir = join(root, 'state');
    const port = await freePort(); // closed
    const error = await importRuntimeDep(HEAVY, {
      stateDir,
      resolveFrom: join(root, 'x.js'),
      env: npmEnv(`http://127.0.0.1:${port}/`, root),
      retryCommand: 'claw plugins enable heavy',
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RuntimeDepInstallError);
    const failure = error as RuntimeDepInstallError;
    expect(failure.offline).toBe(true);
    expect(failure.message).toBe(
      `could not install fake-heavy@^1.0.0: the npm registry http://127.0.0.1:${port}/ cannot be reached (ECONNREFUSED). Connect to the network and retry: claw plugins enable heavy`,
    );
    expect(failure.message).not.toMatch(/\n|\bat \S+ \(/);
    // Nothing half-installed counts as installed.
    expect(locateRuntimeDep('fake-heavy', { stateDir, resolveFrom: join(root, 'x.js') })).toBeUndefined();
  }, 60_000);

  it('prefers a package normal resolution finds, and installs nothing', async () => {
    const root = tempDir('claw-rtd-');
    const project = join(root, 'project');
    writePackage(
      join(project, 'node_modules', 'fake-heavy'),
      { name: 'fake-heavy', version: '1.0.0', type: 'module', exports: { '.': { import: './index.js' } } },
      { 'index.js': "export const where = 'resolved';\n" },
    );
    const resolveFrom = join(project, 'src', 'main.js');
    const stateDir = join(root, 'state');
    const before = registry.requests.length;
    expect(locateRuntimeDep('fake-heavy', { stateDir, resolveFrom })).toEqual({
      source: 'resolved',
      entry: join(project, 'node_modules', 'fake-heavy', 'index.js'),
    });
    const mod = await importRuntimeDep<{ where: string }>(HEAVY, {
      stateDir,
      resolveFrom,
      env: npmEnv(registry.url, root),
    });
    expect(mod.where).toBe('resolved');
    expect(registry.requests.length).toBe(before);
    expect(existsSync(runtimeDepsDir(stateDir))).toBe(false);
    // This repo's dev install resolves node-llama-cpp normally.
    expect(locateRuntimeDep('node-llama-cpp', { stateDir })).toMatchObject({ source: 'resolved' });
  });

  it('explains instead of installing when asked not to install', async () => {
    const root = tempDir('claw-rtd-');
    const error = await importRuntimeDep(HEAVY, {
      stateDir: join(root, 'state'),
      resolveFrom: join(root, 'x.js'),
      install: false,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RuntimeDepMissingError);
    expect((error as Error).message).toBe(
      `fake-heavy is not installed (it is installed on demand, not with claw). Install it with: npm install fake-heavy@^1.0.0 --prefix ${join(root, 'state', 'runtime-deps')} --omit=optional`,
    );
  });

  it('the llama-cpp manifest declares node-llama-cpp as the SDK does, and plugins enable skips what resolves', async () => {
    const manifest = JSON5.parse(readFileSync(join(REPO, 'plugins', 'llama-cpp', 'openclaw.plugin.json'), 'utf8'));
    expect(manifest.runtimeDependencies).toEqual([NODE_LLAMA_CPP]);
    expect(NODE_LLAMA_CPP.platformPackages!['linux-x64']).toBe('@node-llama-cpp/linux-x64');
    // Every named binary package is one node-llama-cpp lists, and none is a GPU variant.
    const optional = Object.keys(
      JSON.parse(readFileSync(join(REPO, 'node_modules', 'node-llama-cpp', 'package.json'), 'utf8'))
        .optionalDependencies,
    );
    for (const name of Object.values(NODE_LLAMA_CPP.platformPackages!)) {
      expect(optional).toContain(name);
      expect(name).not.toMatch(/cuda|vulkan/);
    }
    const root = tempDir('claw-rtd-');
    expect(
      await ensurePluginRuntimeDeps('llama-cpp', manifest, {
        stateDir: join(root, 'state'),
        env: npmEnv('http://127.0.0.1:9/', root),
      }),
    ).toEqual([]);
  });

  it('claw plugins enable installs a plugin’s runtimeDependencies, and says what failed when offline', async () => {
    const root = tempDir('claw-rtd-');
    const stateDir = join(root, 'state');
    mkdirSync(stateDir, { recursive: true });
    const plugins = join(root, 'plugins');
    writePlugin(join(plugins, 'heavy-demo'), {
      manifest: {
        id: 'heavy-demo',
        configSchema: { type: 'object', additionalProperties: false, properties: {} },
        runtimeDependencies: [{ name: 'fake-light', version: '^2.0.0' }],
      },
      code: 'export default { register() {} };',
    });
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ plugins: { load: { paths: [plugins] } } }));
    const port = await freePort();
    const offline = await claw(['plugins', 'enable', 'heavy-demo'], {
      ...npmEnv(`http://127.0.0.1:${port}/`, root),
      OPENCLAW_STATE_DIR: stateDir,
    });
    expect(offline.code).toBe(1);
    expect(offline.stderr).toContain(
      `claw: enabled heavy-demo, but could not install fake-light@^2.0.0: the npm registry http://127.0.0.1:${port}/ cannot be reached (ECONNREFUSED). Connect to the network and retry: claw plugins enable heavy-demo\n`,
    );
    const online = await claw(['plugins', 'enable', 'heavy-demo'], {
      ...npmEnv(registry.url, root),
      OPENCLAW_STATE_DIR: stateDir,
    });
    expect(online).toMatchObject({ code: 0, stdout: 'Enabled heavy-demo.\n' });
    expect(online.stderr).toMatch(
      /^Installing fake-light@\^2\.0\.0 into .*runtime-deps…\nInstalled fake-light@\^2\.0\.0 in [\d.]+ s/,
    );
    expect(existsSync(join(runtimeDepsDir(stateDir), 'node_modules', 'fake-light', 'index.js'))).toBe(true);
    // Enabling again finds it and stays quiet.
    const again = await claw(['plugins', 'enable', 'heavy-demo'], {
      ...npmEnv(`http://127.0.0.1:${port}/`, root),
      OPENCLAW_STATE_DIR: stateDir,
    });
    expect(again).toMatchObject({ code: 0, stderr: '' });
  }, 120_000);
});

describe('first use without node-llama-cpp', () => {
  it('the llama-cpp provider tries the install and explains an unreachable registry in one line', async () => {
    const { createTestKernel } = await import('../sdk/testing.js');
    const { isModelError } = await import('../sdk/index.js');
    const root = tempDir('claw-rtd-');
    const modelPath = join(root, 'model.gguf');
    writeFileSync(modelPath, 'not read: the backend fails first');
    const port = await freePort();
    const kernel = await createTestKernel({
      plugins: [join(REPO, 'plugins', 'llama-cpp')],
      config: { plugins: { entries: { 'llama-cpp': { config: { modelPath } } } } },
      env: { ...npmEnv(`http://127.0.0.1:${port}/`, root), CLAW_RUNTIME_DEPS_STATE_ONLY: '1' },
    });
    try {
      const provider = await kernel.capabilities.get('provider', 'llama-cpp');
      const error = await (async () => {
        for await (const _ of provider.stream(
          { model: 'model', messages: [{ role: 'user', content: 'hi' }] },
          { signal: new AbortController().signal },
        ))
          void _;
      })().catch((caught: unknown) => caught);
      expect(isModelError(error)).toBe(true);
      expect((error as Error).message).toBe(
        `llama-cpp: could not start llama.cpp: could not install node-llama-cpp@^3.22.1: the npm registry http://127.0.0.1:${port}/ cannot be reached (ECONNREFUSED). Connect to the network and retry: claw plugins enable llama-cpp`,
      );
      expect(existsSync(join(kernel.stateDir, 'runtime-deps', 'node_modules', 'node-llama-cpp'))).toBe(false);
    } finally {
      await kernel.dispose();
    }
  }, 60_000);

  it('local memory embeddings do the same, naming what to run', async () => {
    const { LocalEmbeddingProvider } = await import('../plugins/embeddings/local.js');
    const root = tempDir('claw-rtd-');
    const port = await freePort();
    const provider = new LocalEmbeddingProvider({
      modelPath: join(root, 'embed.gguf'),
      timeoutMs: 30_000,
      runtimeDeps: runtimeDepsService({
        stateDir: join(root, 'state'),
        env: { ...npmEnv(`http://127.0.0.1:${port}/`, root), CLAW_RUNTIME_DEPS_STATE_ONLY: '1' },
      }),
    });
    const error = await provider.embed(['hello']).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(
      `local embeddings (${join(root, 'embed.gguf')}): could not start llama.cpp (node-llama-cpp): could not install node-llama-cpp@^3.22.1: the npm registry http://127.0.0.1:${port}/ cannot be reached (ECONNREFUSED). Connect to the network and retry: claw plugins enable llama-cpp (or set memorySearch.provider to a remote one)`,
    );
    await provider.close();
  }, 60_000);
});
