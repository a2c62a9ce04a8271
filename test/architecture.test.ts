import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { definePlugin, type CapabilityLookup, type OutboundMessage } from '../sdk/index.js';
import { bundledPluginDir, createTestKernel } from '../sdk/testing.js';
import { REPO } from './helpers.js';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sources(path);
    return /\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Relative import targets of a file, resolved to repository-relative paths. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"]([^'"]+)['"]/g)].map((match) => match[1]!);
  return specs.filter((spec) => spec.startsWith('.')).map((spec) => relative(REPO, resolve(dirname(file), spec)));
}

/**
 * Lines of the hand-written kernel (everything under kernel/ except kernel/generated/), counted
 * as `wc -l` does, with the files that prettier (the repo's .prettierrc.json) would rewrite:
 * the budget holds for the kernel as the formatter writes it, so joining lines cannot meet it.
 */
async function kernelLines(): Promise<{ total: number; files: Array<[string, number]>; unformatted: string[] }> {
  const files: Array<[string, number]> = [];
  const unformatted: string[] = [];
  for (const file of sources(join(REPO, 'kernel'))) {
    const path = relative(REPO, file);
    if (path.startsWith('kernel/generated/')) continue;
    const text = readFileSync(file, 'utf8');
    const options = await prettier.resolveConfig(file);
    if (!(await prettier.check(text, { ...options, filepath: file }))) unformatted.push(path);
    files.push([path, (text.match(/\n/g) ?? []).length]);
  }
  return { total: files.reduce((sum, [, lines]) => sum + lines, 0), files, unformatted };
}

/**
 * Issue 10's target: 3,000 lines (`wc -l`), now met. On the way: 7,110 before the channel
 * pipeline, session keys, the chunker and plugin management moved out; 5,586 before the
 * channel, model, memory and sandbox contracts moved to sdk/types/; 4,043 before the TypeBox
 * sources moved to schemas/, route matching to the gateway and the plain logger to the SDK;
 * 3,953 before the rules the kernel enforces moved to the SDK's `clawPolicy`, with the jiti
 * loader, the validator cache and the composed config schema; 3,312 before the file helpers
 * and writing openclaw.json moved to the SDK (the kernel reads and checks config, writes no
 * files) and "what" comments that restated the code were cut. The budget is a ratchet: lower
 * it whenever code leaves the kernel, never raise it above the target.
 */
const KERNEL_LINE_TARGET = 3000;
const KERNEL_LINE_BUDGET = 3000;

describe('a small kernel', () => {
  it(`kernel/ stays within ${KERNEL_LINE_BUDGET} hand-written lines as prettier writes them (target ${KERNEL_LINE_TARGET})`, async () => {
    const { total, files, unformatted } = await kernelLines();
    expect(unformatted, 'run `npx prettier --write kernel`').toEqual([]);
    const largest = files
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([file, lines]) => `${file}: ${lines}`)
      .join(', ');
    expect(total, `kernel/ has ${total} lines; largest: ${largest}`).toBeLessThanOrEqual(KERNEL_LINE_BUDGET);
  });
});

/**
 * Issue 29's target for the SDK: 6,000 lines (contracts, kits and test tools). Not met yet:
 * 19,046 formatted lines before sessions, models, the memory engine, embeddings, gateway
 * auth, runtime deps, the outbound path and the OpenClaw adapter moved into their plugins
 * and host/; 12,376 before the memory host (memory-core), exec policy, sandbox routing and
 * checks, the SSRF guard ("net"), redaction, the gateway client, plugin admin and agent
 * settings left too; 7,652 before memory-core's file policy (which files are memory, path
 * containment, size caps) left too. Counted as the tree is written (`npm test` checks the
 * tree is formatted). The budget is a ratchet: lower it whenever code leaves the SDK, never
 * raise it — save for 3 lines of contract: the gateway-daemon service's install and
 * unavailable (claw onboard's daemon step, issue 30). 7,400 before the wire protocol's
 * TypeBox source moved to schemas/ (its types are generated into sdk/generated/) and the
 * memory text kit's implementation (tokens, CJK segmentation, chunking, snippets) moved to
 * memory-core, which hands it to backends as `ctx.text`. Raised by 16 for the sessions
 * service's OpenClaw row contract (`openclawRow`), which replaced a 126-line copy of the row
 * code in the agent plugin (issue 31), and by 39 for the config-edit kit (`editConfig` in
 * sdk/config), which replaced two copies in the agent and skills plugins. Raised by 8 for
 * the price contract (issue 33): a model's `cost` per million tokens, the USD cost a call's
 * usage carries, and the session's `/usage` footer mode. Raised by 4 for the reset event's
 * `failover` (issue 34): which model failed and which one is tried next, for the CLI and UI;
 * and by 59 for the request-body kit (sdk/net/body.ts: a size cap and a deadline), which
 * replaced copies in the hooks, openai-http and telegram plugins and a fourth in the gateway's
 * POST /tools/invoke. Raised by 2 for a memory backend's `indexOnStart` (issue 34): an idle
 * gateway opens no index unless its backend must warm up. Raised by 21 for
 * `runtimeDependencyLoader` (issue 35), which replaced the same lazy-import-and-retry loader
 * in the Discord, Slack and IRC plugins. Raised by 15 for Matrix (issue 35): channel settings
 * read OpenClaw's nested `dm.policy` / `dm.allowFrom`, and the contract suite takes a
 * platform's spelling of its ids (`@user:server`, `!room:server`). Raised by 97 for the channel
 * setup contract (issue 35): `ChannelPlugin.setup` (a channel's `claw channels add` flags,
 * config keys, env variables, secrets and platform check, replacing `checkToken`) and the kit
 * reading its fields (sdk/channels/setup.ts), so `claw channels add` and the onboard wizard name
 * no channel. Raised by 43 for the media-understanding contract (issue 36, sdk/types/media.ts):
 * a message's saved files reach the agent as `attachments`, which a plugin's service turns into
 * text and images before the turn. Raised by 76 (issue 36) for audio attachments on chat.send
 * and webchat.send (sdk/attachments.ts: checked, then saved owner-only) and `withToolMedia`
 * (sdk/agent/reply.ts: files a tool made, such as image_generate's, go out with the reply).
 * Raised by 7 for InboundMessage's `sessionScope` and `replyAddress` (issue 35): Slack's slash
 * commands run in a session of their own and answer through a reply URL, while access control
 * still follows the conversation they were typed in; and by 2 for an HTTP route's
 * `formBodies`, since Slack posts its slash commands form-encoded. Raised by 186 when the file
 * tools' path containment moved from plugins/tools-fs/contain.ts to sdk/fs-contain.ts unchanged
 * (issue 36), so the pdf tool judges a workspace path by the same rules (real paths, symlinks,
 * hard links, /proc) instead of a second copy; and by 1 for `group:media` (the pdf tool,
 * OpenClaw's group name). Raised by 42 for the text-to-speech contract (issue 36, sdk/tts.ts: a
 * speech provider is a `tts:<id>` service) and the voice-note marker on outbound media, which a
 * message_sending handler may now add. Raised by 15 for `imageFormat` (sdk/attachments.ts),
 * which replaced the same byte-signature check in the media-understanding and image-generation
 * plugins. Raised by 2 (issue 34): `reuse` on CliContext.boot, so `claw gateway` runs in the
 * kernel it was found in, and the gateway-auth service's `flagSecrets` (config no longer sees
 * --token, so the webhook check asks). Raised by 42 for sdk/method-table.ts: the gateway's
 * table of small OpenClaw methods (scope, description, handler; a required string param;
 * "claw has no …") moved out of the gateway plugin, because the methods for features claw
 * lacks left it for a plugin of their own (openclaw-absent, loaded on first call) and both use it.
 * Raised by 13 for `nodeHttp()` (sdk/net/node-http.ts): node:http as a CommonJS module, because
 * an ES import of it loads undici on Node 22 and 24 (≈ 40 ms of a gateway start).
 */
const SDK_LINE_TARGET = 6000;
const SDK_LINE_BUDGET = 7858;

describe('an SDK of contracts, kits and test tools', () => {
  const sdkFiles = () =>
    sources(join(REPO, 'sdk')).filter((file) => !relative(REPO, file).startsWith('sdk/generated/'));

  it(`sdk/ stays within ${SDK_LINE_BUDGET} lines (target ${SDK_LINE_TARGET})`, () => {
    const total = sdkFiles().reduce((sum, file) => sum + (readFileSync(file, 'utf8').match(/\n/g) ?? []).length, 0);
    expect(total).toBeLessThanOrEqual(SDK_LINE_BUDGET);
  });

  // The classes the SDK may hand a plugin to construct: errors and small kits. A service's
  // implementation is its plugin's; a plugin that needs one asks for the service.
  const KITS = new Set(['ChannelAccounts', 'BlockChunker', 'TtlCache']);

  it("no plugin constructs an SDK class that is not an error or a kit (no copy of another plugin's service)", () => {
    const sdkClasses = new Set(
      sdkFiles().flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/^export (?:abstract )?class (\w+)/gm)].map((m) => m[1]!),
      ),
    );
    expect(sdkClasses.size).toBeGreaterThan(0);
    const offenders: string[] = [];
    let kits = 0;
    for (const file of sources(join(REPO, 'plugins'))) {
      for (const [, name] of readFileSync(file, 'utf8').matchAll(/\bnew (\w+)\s*[(<]/g)) {
        if (!sdkClasses.has(name!)) continue;
        if (KITS.has(name!)) kits++;
        else if (!name!.endsWith('Error')) offenders.push(`${relative(REPO, file)}: new ${name}`);
      }
    }
    expect(offenders).toEqual([]);
    expect(kits, 'the scan sees the kits plugins do construct').toBeGreaterThan(0);
  });
});

describe('one tool choke point', () => {
  // Methods named execute that are not tools: file → why it is not a tool call.
  const NOT_TOOLS: Record<string, RegExp> = {
    // An OpenClaw plugin's tool, called from inside the claw tool the choke point is running.
    'host/openclaw/tools.ts': /tool\.execute\(ctx\.toolCallId, params, ctx\.signal, onUpdate\)/,
  };

  it("nothing but kernel/tools/invoke.ts calls a tool's execute (every caller goes through invokeTool)", () => {
    const offenders: string[] = [];
    for (const root of ['kernel', 'host', 'sdk', 'plugins', 'apps']) {
      for (const file of sources(join(REPO, root))) {
        const path = relative(REPO, file);
        if (path === 'kernel/tools/invoke.ts' || path.includes('/generated/')) continue;
        const text = readFileSync(file, 'utf8');
        for (const line of text.split('\n')) {
          if (!/\.execute\s*\(/.test(line)) continue;
          if (NOT_TOOLS[path]?.test(line)) continue;
          offenders.push(`${path}: ${line.trim()}`);
        }
      }
    }
    expect(offenders).toEqual([]);
    // The one call the choke point makes is still there (the scan above is not vacuous).
    expect(readFileSync(join(REPO, 'kernel/tools/invoke.ts'), 'utf8')).toMatch(/tool\.execute\(params/);
  });
});

describe('one send choke point', () => {
  it('a channel found through capabilities sends only through the outbound path: hooks run, secrets are masked', async () => {
    const reached: OutboundMessage[] = [];
    let capabilities: CapabilityLookup | undefined;
    const kernel = await createTestKernel({
      plugins: [
        bundledPluginDir('channels'),
        definePlugin({
          id: 'fake-chat',
          register(api) {
            api.registerChannel({ id: 'fake', textLimit: 1000, send: async (message) => (reached.push(message), {}) });
          },
        }),
        definePlugin({
          id: 'guard',
          register(api) {
            api.on('message_sending', (event) => (event.content?.includes('cancel me') ? { cancel: true } : undefined));
          },
        }),
        definePlugin({
          id: 'other',
          register(api) {
            capabilities = api.kernel.capabilities;
          },
        }),
      ],
    });
    try {
      const key = `sk-ant-api03-${'x'.repeat(32)}`;
      for (const lookup of [capabilities!, kernel.capabilities]) {
        const channel = await lookup.get('channel', 'fake');
        await channel.send({ to: 'u1', text: 'please cancel me' });
        expect(reached).toEqual([]);
        await channel.send({ to: 'u1', text: `the key is ${key}` });
        expect(reached.map((message) => message.text)).toEqual([expect.stringContaining('the key is sk-ant-')]);
        expect(reached[0]!.text).not.toContain(key);
        reached.length = 0;
      }
      // The choke point itself masks what it hands the platform, whoever called it.
      await kernel.plugins.kernelServices.channels.send({ channel: 'fake', to: 'u1', text: `again ${key}` });
      expect(reached).toHaveLength(1);
      expect(reached[0]!.text).not.toContain(key);
    } finally {
      await kernel.dispose();
    }
  });
});

/**
 * The SDK's test kit boots a kernel as claw does (policy, loader, config writer): it is a host
 * handed to plugin authors, so it alone reaches host/, and only through clawKernelParts.
 */
const SDK_TO_HOST: Record<string, string> = { 'sdk/testing.ts': 'host/kernel-options.js' };

describe('dependency direction: apps → host → kernel, apps → plugins → sdk → kernel', () => {
  it('kernel/ imports nothing outside kernel/', () => {
    const offenders = sources(join(REPO, 'kernel')).flatMap((file) =>
      imports(file)
        .filter((target) => !target.startsWith('kernel/'))
        .map((target) => `${relative(REPO, file)} → ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  it("sdk/ imports only sdk/ and kernel/ (the test kit also the host's kernel parts)", () => {
    const offenders = sources(join(REPO, 'sdk')).flatMap((file) =>
      imports(file)
        .filter((target) => !/^(sdk|kernel)\//.test(target) && SDK_TO_HOST[relative(REPO, file)] !== target)
        .map((target) => `${relative(REPO, file)} → ${target}`),
    );
    expect(offenders).toEqual([]);
    // The exception is in use (else it should go).
    for (const [file, target] of Object.entries(SDK_TO_HOST)) expect(imports(join(REPO, file))).toContain(target);
  });

  it('host/ imports only host/, sdk/ and kernel/ (apps wire plugins, the host never names one)', () => {
    const offenders = sources(join(REPO, 'host')).flatMap((file) =>
      imports(file)
        .filter((target) => !/^(host|sdk|kernel)\//.test(target))
        .map((target) => `${relative(REPO, file)} → ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  it('a bundled plugin imports only the SDK (by relative path) and its own files (never the kernel, host/, another plugin or apps/)', () => {
    const offenders: string[] = [];
    for (const plugin of readdirSync(join(REPO, 'plugins'))) {
      for (const file of sources(join(REPO, 'plugins', plugin))) {
        for (const target of imports(file)) {
          if (!target.startsWith(`plugins/${plugin}/`) && !target.startsWith('sdk/'))
            offenders.push(`${relative(REPO, file)} → ${target}`);
        }
        // Bundled plugins reach the SDK by relative path: in dist/ nothing maps the package
        // specifiers (tsconfig "paths" and the jiti aliases are for third-party plugins).
        const text = readFileSync(file, 'utf8');
        for (const match of text.matchAll(/from\s+['"]((?:@claw-assistant\/)?claw(?:\/[^'"]*)?)['"]/g)) {
          offenders.push(`${relative(REPO, file)} → ${match[1]} (import ../../sdk/… instead)`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('a bundled plugin imports only SDK modules that package.json "exports" offers (what a third party can import)', () => {
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { exports: Record<string, string> };
    // `./dist/sdk/x.js` is built from `sdk/x.ts`.
    const exported = new Set(
      Object.values(pkg.exports).flatMap((target) =>
        /^\.\/dist\/sdk\/.*\.js$/.test(target) ? [target.slice('./dist/'.length).replace(/\.js$/, '.ts')] : [],
      ),
    );
    const offenders: string[] = [];
    // A schemas.ts is a build input (`npm run gen`), never shipped: the memory plugins' re-export the memory kit's.
    for (const file of sources(join(REPO, 'plugins')).filter((path) => !path.endsWith('/schemas.ts'))) {
      for (const target of imports(file).map((path) => path.replace(/\.js$/, '.ts'))) {
        if (target.startsWith('sdk/') && !exported.has(target)) {
          offenders.push(
            `${relative(REPO, file)} → ${target} (not exported: import it through an entry point, or export one)`,
          );
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('apps/ reach plugins only through the kernel (no imports of plugin files)', () => {
    const offenders = sources(join(REPO, 'apps', 'cli')).flatMap((file) =>
      imports(file)
        .filter((target) => target.startsWith('plugins/'))
        .map((target) => `${relative(REPO, file)} → ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  it('the runtime kernel never imports TypeBox (schemas are generated at build time)', () => {
    const offenders = sources(join(REPO, 'kernel'))
      .filter((file) => /from\s+['"]typebox['"]/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(REPO, file));
    expect(offenders).toEqual([]);
  });

  it('nothing at run time ES-imports a value from node:http (nodeHttp() instead: on Node 22+ that import loads undici)', () => {
    const offenders = ['kernel', 'host', 'sdk', 'plugins', 'apps/cli']
      .flatMap((dir) => sources(join(REPO, dir)))
      .filter((file) => /^import (?!type\b)[^;]*from ['"](node:)?http['"]/m.test(readFileSync(file, 'utf8')))
      .map((file) => relative(REPO, file));
    expect(offenders).toEqual([]);
  });

  it('schemas/ (build inputs) imports only the kernel, and nothing at run time imports schemas/', () => {
    const offenders = sources(join(REPO, 'schemas')).flatMap((file) =>
      imports(file)
        .filter((target) => !/^(schemas|kernel)\//.test(target))
        .map((target) => `${relative(REPO, file)} → ${target}`),
    );
    for (const dir of ['kernel', 'sdk', 'plugins', 'apps']) {
      for (const file of sources(join(REPO, dir))) {
        for (const target of imports(file))
          if (target.startsWith('schemas/')) offenders.push(`${relative(REPO, file)} → ${target}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("a plugin's schemas.ts (TypeBox, turned into its manifest and generated/types.ts by `npm run gen`) is imported only by other build inputs", () => {
    const offenders: string[] = [];
    for (const dir of ['kernel', 'host', 'sdk', 'plugins', 'apps']) {
      for (const file of sources(join(REPO, dir))) {
        if (file.endsWith('/schemas.ts')) continue;
        for (const target of imports(file))
          if (/(^plugins\/[^/]+|^sdk\/memory)\/schemas\.js$/.test(target))
            offenders.push(`${relative(REPO, file)} → ${target}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

/** Import circles among the files under `dir` (type-only imports count), each as a list of files. */
function circles(dir: string): string[][] {
  const files = sources(join(REPO, dir)).map((file) => relative(REPO, file));
  const known = new Set(files);
  const edges = new Map(
    files.map((file) => [
      file,
      imports(join(REPO, file))
        .map((target) => target.replace(/\.js$/, '.ts'))
        .filter((target) => known.has(target)),
    ]),
  );
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const target of edges.get(file)!) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (stack.includes(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || edges.get(file)!.includes(file)) found.push(component.sort());
    }
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return found;
}

describe('no import circles', () => {
  const roots = [
    'kernel',
    'host',
    'sdk',
    'apps/cli',
    ...readdirSync(join(REPO, 'plugins')).map((plugin) => `plugins/${plugin}`),
  ];
  it.each(roots)('in %s/', (dir) => {
    expect(circles(dir)).toEqual([]);
  });

  it('finds a circle when there is one', () => {
    const dir = mkdtempSync(join(REPO, 'test', '.circle-'));
    try {
      writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.js';\nexport type A = B;\n");
      writeFileSync(join(dir, 'b.ts'), "import { a } from './a.js';\nexport type B = typeof a;\n");
      expect(circles(relative(REPO, dir))).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('plugin management lives in the CLI app', () => {
  it('kernel/ holds no install, uninstall, enable or disable code', () => {
    const files = sources(join(REPO, 'kernel')).map((file) => relative(REPO, file));
    expect(files.filter((file) => /plugin-host\/(install|manage|describe)\.ts$/.test(file))).toEqual([]);
    const kernelIndex = readFileSync(join(REPO, 'kernel', 'index.ts'), 'utf8');
    for (const name of ['installPlugin', 'enablePlugin', 'disablePlugin', 'forgetPlugin', 'PluginManageError']) {
      expect(kernelIndex).not.toContain(name);
    }
  });
});

describe('scripts run against the built tree', () => {
  /** `import { a, b } from './dist/x.js'` lines in the shell scripts CI and the README run. */
  function distImports(): Array<{ script: string; names: string[]; module: string }> {
    const scripts = [
      ...readdirSync(join(REPO, 'scripts'))
        .filter((name) => name.endsWith('.sh'))
        .map((name) => join('scripts', name)),
      join('.ci', 'run'),
    ];
    return scripts.flatMap((script) =>
      [...readFileSync(join(REPO, script), 'utf8').matchAll(/import\s*\{([^}]+)\}\s*from\s*'\.\/(dist\/[^']+)'/g)].map(
        (match) => ({
          script,
          names: match[1]!.split(',').map((name) => name.trim().split(/\s+as\s+/)[0]!),
          module: match[2]!,
        }),
      ),
    );
  }

  // A script's import of a module that moved fails only on a fresh machine (CI), so check here.
  it('every name a script imports from dist/ is exported there', async () => {
    const found = distImports();
    expect(found.length).toBeGreaterThan(0);
    const missing: string[] = [];
    for (const { script, names, module } of found) {
      const path = join(REPO, module);
      const loaded = await import(path).catch(() => undefined);
      for (const name of names) if (!loaded || !(name in loaded)) missing.push(`${script}: ${name} from ${module}`);
    }
    expect(missing).toEqual([]);
  });
});
