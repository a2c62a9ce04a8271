import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { schemaProblems } from '../kernel/index.js';
import { AJV_OPTIONS, KERNEL_CONFIG_SCHEMA } from '../kernel/generated/schemas.js';
import { readManifest } from '../host/manifest.js';
import { generatedFiles } from '../scripts/gen-schemas.js';
import { REPO } from './helpers.js';

describe('generated schemas', () => {
  it('are up to date with the TypeBox definitions (run `npm run gen` if this fails)', async () => {
    for (const [file, content] of Object.entries(await generatedFiles())) {
      expect(readFileSync(join(REPO, file), 'utf8'), file).toBe(content);
    }
  });

  it('manifests/openclaw.plugin.schema.json is a valid JSON Schema', () => {
    const schema = JSON.parse(readFileSync(join(REPO, 'manifests', 'openclaw.plugin.schema.json'), 'utf8'));
    expect(schemaProblems(schema)).toEqual([]);
    expect(schema.required).toEqual(['id', 'configSchema']);
  });

  it('every bundled plugin manifest is valid and has no unknown fields', () => {
    const dirs = readdirSync(join(REPO, 'plugins'));
    expect(dirs.length).toBeGreaterThanOrEqual(2);
    for (const dir of dirs) {
      const result = readManifest(join(REPO, 'plugins', dir));
      expect(result.ok ? result.warnings : result.error, dir).toEqual([]);
      if (result.ok) expect(result.manifest.id, dir).toBe(dir);
    }
  });

  it('the kernel config validator in sections answers as the whole schema does: validity, errors, defaults', () => {
    const sectioned = createRequire(import.meta.url)(
      join(REPO, 'kernel', 'generated', 'validators', 'kernel-config.cjs'),
    ) as ((data: unknown) => boolean) & { errors: ErrorObject[] | null };
    const whole = new Ajv({ ...AJV_OPTIONS }).compile(KERNEL_CONFIG_SCHEMA);
    const cases: unknown[] = [
      {},
      { gateway: { port: 1 } },
      { agents: { defaults: { model: 'x', workspace: '/w', maxConcurrent: 'no' } } },
      { agents: { list: [{ id: 'a' }, { id: 5 }] } },
      { plugins: { enabled: true, entries: { x: { enabled: 'y' } } } },
      { channels: { telegram: { enabled: true, botToken: 't', dmPolicy: 'weird' } } },
      { tools: { profile: 'full', exec: { security: 'bad' } } },
      { bindings: [{ agentId: 'a', match: { channel: 'x' } }, 5] },
      { unknownKey: 1, meta: {} },
      { agents: 5, tools: [], channels: null },
      { $schema: 3 },
      { 'a/b~c': {} },
      [],
      'not an object',
    ];
    const shape = (errors: ErrorObject[] | null | undefined) =>
      (errors ?? []).map((e) => `${e.instancePath} ${e.keyword} ${JSON.stringify(e.params)}`).sort();
    for (const input of cases) {
      const [a, b] = [structuredClone(input), structuredClone(input)];
      const label = JSON.stringify(input);
      expect(sectioned(a), label).toBe(whole(b));
      expect(shape(sectioned.errors), label).toEqual(shape(whole.errors));
      expect(a, label).toEqual(b);
    }
  });
});
