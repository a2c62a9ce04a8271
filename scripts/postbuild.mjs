// After tsc: give dist/plugins/<id>/ its manifest (entry rewritten from .ts to the emitted
// .js) and every non-TypeScript file, so dist/ runs without any source next to it; and
// precompile every bundled plugin's config schemas, contributed keys and gateway method parameters into
// dist/validators, so starting claw never compiles a schema for a bundled plugin.
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import JSON5 from 'json5';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'plugins');
const target = join(root, 'dist', 'plugins');
const validators = join(root, 'dist', 'validators');
// tsc emits .ts only; the kernel's precompiled validators are CommonJS files beside it (the
// gateway's wire-frame validators travel with its folder below).
cpSync(join(root, 'kernel/generated/validators'), join(root, 'dist/kernel/generated/validators'), { recursive: true });
const { schemaCompiler, useValidatorStore } = await import(join(root, 'dist', 'kernel', 'validation.js'));
const { EMPTY_RESULTS, standaloneValidator, validatorKey } = await import(
  join(root, 'dist', 'host', 'validator-cache.js')
);
const { configContributions } = await import(join(root, 'dist', 'host', 'config-schema.js'));
// What each schema makes of an empty object (its defaults filled in): most sections and
// plugins are not configured at all, and a start then needs no validator code for them.
const emptyResults = {};
const precompile = (schema) => {
  const key = validatorKey(schema);
  const validate = schemaCompiler().compile(schema);
  writeFileSync(join(validators, `${key}.cjs`), standaloneValidator(validate, true));
  const empty = {};
  if (validate(empty)) emptyResults[key] = empty;
};
const records = [];
rmSync(validators, { recursive: true, force: true });
mkdirSync(validators, { recursive: true });

for (const id of readdirSync(source)) {
  const dir = join(source, id);
  if (!statSync(dir).isDirectory()) continue;
  const out = join(target, id);
  mkdirSync(out, { recursive: true });
  cpSync(dir, out, {
    recursive: true,
    filter: (path) => statSync(path).isDirectory() || !/\.(m|c)?ts$/.test(path) || path.endsWith('.d.ts'),
  });
  const manifestPath = join(dir, 'openclaw.plugin.json');
  const manifest = JSON5.parse(readFileSync(manifestPath, 'utf8'));
  if (typeof manifest.entry === 'string')
    manifest.entry = manifest.entry.replace(/\.(m|c)?ts$/, (ext) => ext.replace('ts', 'js'));
  writeFileSync(join(out, 'openclaw.plugin.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const schema of [manifest.configSchema, ...Object.values(manifest.configSections ?? {})]) precompile(schema);
  records.push({ id: manifest.id, manifest });
}
// The keys bundled plugins contribute to agents and tools, merged as the host merges them.
for (const place of Object.values(configContributions(records)))
  for (const { schema } of place.values()) precompile(schema);
// Gateway methods' parameter schemas are registered in code, not declared in manifests: load
// every bundled plugin that is on by default (registering starts nothing) and precompile each
// declared method's schema, so a fresh gateway's first request loads no ajv.
{
  const { bootKernel } = await import(join(root, 'dist', 'apps', 'cli', 'boot.js'));
  const stateDir = mkdtempSync(join(tmpdir(), 'claw-build-'));
  try {
    const kernel = await bootKernel({ env: { OPENCLAW_STATE_DIR: stateDir, HOME: stateDir }, stderr: { write() {} } });
    await kernel.plugins.activateAll();
    const methods = new Set();
    for (const record of kernel.plugins.list())
      for (const name of record.manifest?.gatewayMethods ?? []) {
        const params = kernel.protocol.method(name)?.params;
        if (params && !methods.has(params)) methods.add(params);
      }
    // The kernel's validator store (the build's own validators) is not this build's compiler.
    useValidatorStore(undefined);
    for (const schema of methods) precompile(schema);
    await kernel.stop();
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}
writeFileSync(join(validators, EMPTY_RESULTS), `${JSON.stringify(emptyResults)}\n`);

// Every bundled plugin's checked manifest, so a start need not parse and check them again
// (host/manifest.ts reads this for the bundled folder only, keyed by the files' content).
const { MANIFEST_REGISTRY, fileIdentity, manifestKey, readManifest } = await import(
  join(root, 'dist', 'host', 'manifest.js')
);
const registry = {};
for (const id of readdirSync(target).sort()) {
  const dir = join(target, id);
  if (!statSync(dir).isDirectory()) continue;
  const result = readManifest(dir);
  registry[id] = {
    key: manifestKey(dir),
    identity: fileIdentity(dir),
    result: result.ok ? { ...result, entryPath: relative(dir, result.entryPath) } : result,
  };
}
writeFileSync(join(target, MANIFEST_REGISTRY), `${JSON.stringify({ plugins: registry })}\n`);

// dist/cjs holds CommonJS builds inside a "type": "module" package.
writeFileSync(join(root, 'dist', 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
chmodSync(join(root, 'dist', 'apps', 'cli', 'bin.cjs'), 0o755);

// Last, once nothing above imports compiled modules: each plugin's own files into one module per
// entry, and the CLI, kernel, host and SDK into dist/core.
const { bundlePlugins } = await import('./bundle-plugins.mjs');
await bundlePlugins(target);
const { bundleCore } = await import('./bundle-core.mjs');
await bundleCore(join(root, 'dist'), JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')));
