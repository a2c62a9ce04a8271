import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestKernel } from '../sdk/testing.js';
import { claw, REPO, tempDir, writePlugin } from './helpers.js';

const readme = readFileSync(join(REPO, 'README.md'), 'utf8');

function block(language: string, firstLine: string): string {
  const match = new RegExp(
    '```' + language + '\\n(' + firstLine.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&') + '[\\s\\S]*?)```',
  ).exec(readme);
  if (!match) throw new Error(`README has no ${language} block starting with ${firstLine}`);
  return match[1]!;
}

describe('README', () => {
  it('shows a plugin in at most 30 lines that works as written', async () => {
    const manifest = block('json5', '// my-plugin/openclaw.plugin.json');
    const code = block('ts', '// my-plugin/index.ts');
    const lines = (text: string) =>
      text
        .trim()
        .split('\n')
        .filter((line) => !line.trim().startsWith('//')).length;
    expect(lines(manifest) + lines(code)).toBeLessThanOrEqual(30);

    const dir = writePlugin(join(tempDir(), 'my-plugin'), { manifest, code, entryFile: 'index.ts' });
    const kernel = await createTestKernel({ plugins: [dir] });
    expect(await kernel.runTool('shout', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'HI!' }] });
    expect(await kernel.hooks.runModifying('message_sending', { to: 'u', content: '  hello  ' })).toEqual({
      content: 'hello',
    });
    await kernel.dispose();
  });

  it('shows a provider config that validates', async () => {
    const config = block('json5', '{\n  agents: { defaults: {');
    const dir = tempDir();
    writeFileSync(join(dir, 'openclaw.json'), config);
    const result = await claw(['config', 'validate'], {
      OPENCLAW_STATE_DIR: dir,
      ANTHROPIC_API_KEY: 'a',
      OPENAI_API_KEY: 'b',
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    // And a mistake in the same place is caught.
    writeFileSync(join(dir, 'openclaw.json'), config.replace('api: "openai-responses"', 'api: "openai-nonsense"'));
    const broken = await claw(['config', 'validate'], {
      OPENCLAW_STATE_DIR: dir,
      ANTHROPIC_API_KEY: 'a',
      OPENAI_API_KEY: 'b',
    });
    expect(broken.code).toBe(1);
    expect(broken.stdout + broken.stderr).toMatch(/models\.providers\.openai\.api/);
  });

  it('gives the two set-up commands that CI runs', () => {
    expect(readme).toContain('npm install && npx claw gateway ');
    expect(readme).toContain('npm test ');
    expect(readFileSync(join(REPO, '.ci', 'run'), 'utf8')).toMatch(/\nnpm test\n/);
  });
});
