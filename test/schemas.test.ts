import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { schemaProblems } from '../kernel/index.js';
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
});
