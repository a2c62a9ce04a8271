/** `claw --help`: plugin commands read from JSON5 manifests, only from plugins that are on, with the right owner. */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claw, tempDir, writePlugin } from './helpers.js';
import { HELP_MANIFEST_CAP } from '../apps/cli/help.js';
import { MAX_MANIFEST_BYTES } from '../host/manifest.js';

function stateEnv() {
  const stateDir = tempDir('claw-help-');
  return { stateDir, env: { OPENCLAW_STATE_DIR: stateDir, OPENCLAW_CONFIG_PATH: join(stateDir, 'openclaw.json') } };
}

/** The "Commands from plugins" lines as name → owner. */
function pluginCommands(stdout: string): Record<string, string> {
  const section = stdout.split('Commands from plugins:\n')[1]?.split('\n\n')[0] ?? '';
  return Object.fromEntries(
    section
      .split('\n')
      .map((line) => /^ {2}(\S+)\s.*\(([^()]+)\)$/.exec(line))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => [match[1]!, match[2]!]),
  );
}

const JSON5_MANIFEST = (id: string, command: string) => `// A hand-written JSON5 manifest
{
  id: '${id}',
  configSchema: { type: 'object', properties: {}, },
  /* commands this plugin adds */
  cliCommands: [
    { name: '${command}', description: 'Does ${command} things', },
  ],
}
`;

describe('claw --help', () => {
  it('lists commands from JSON5 manifests, only of plugins that are on, and never runs plugin code', async () => {
    const { stateDir, env } = stateEnv();
    const extensions = join(stateDir, 'extensions');
    const marker = join(stateDir, 'evaluated.txt');
    const code = `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(marker)}, 'x'); export default { register() {} };`;
    writePlugin(join(extensions, 'fivey'), { manifest: JSON5_MANIFEST('fivey', 'fivey-cmd'), code });
    writePlugin(join(extensions, 'sleepy'), { manifest: JSON5_MANIFEST('sleepy', 'sleepy-cmd'), code });
    writePlugin(join(extensions, 'banned'), { manifest: JSON5_MANIFEST('banned', 'banned-cmd'), code });
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      `// JSON5 config
      { plugins: { deny: ['banned'], entries: { sleepy: { enabled: false }, }, }, }`,
    );

    const help = await claw(['--help'], env);
    expect(help.code, help.stderr).toBe(0);
    const commands = pluginCommands(help.stdout);
    expect(commands['fivey-cmd']).toBe('fivey');
    expect(help.stdout).toMatch(/ {2}fivey-cmd\s+Does fivey-cmd things \(fivey\)\n/);
    expect(commands['sleepy-cmd']).toBeUndefined();
    expect(commands['banned-cmd']).toBeUndefined();
    expect(existsSync(marker)).toBe(false);
  });

  it('skips a manifest over the cap unread, as the plugin host refuses it', async () => {
    expect(HELP_MANIFEST_CAP).toBe(MAX_MANIFEST_BYTES);
    const { stateDir, env } = stateEnv();
    const padded = `${JSON5_MANIFEST('padded', 'padded-cmd')}\n${' '.repeat(MAX_MANIFEST_BYTES)}`;
    writePlugin(join(stateDir, 'extensions', 'padded'), {
      manifest: padded,
      code: 'export default { register() {} };',
    });
    writePlugin(join(stateDir, 'extensions', 'small'), {
      manifest: JSON5_MANIFEST('small', 'small-cmd'),
      code: 'export default { register() {} };',
    });
    const help = await claw(['--help'], env);
    expect(help.code, help.stderr).toBe(0);
    expect(pluginCommands(help.stdout)).toMatchObject({ 'small-cmd': 'small' });
    expect(pluginCommands(help.stdout)['padded-cmd']).toBeUndefined();
  });

  it('attributes `memory` to the memory slot holder: memory-sqlite by default, else the configured one', async () => {
    const { stateDir, env } = stateEnv();
    const byDefault = pluginCommands((await claw(['--help'], env)).stdout);
    expect(byDefault.memory).toBe('memory-sqlite');
    expect(byDefault.agent).toBe('agent');

    writeFileSync(join(stateDir, 'openclaw.json'), '{ plugins: { slots: { memory: "memory-minisearch" } } }');
    expect(pluginCommands((await claw(['--help'], env)).stdout).memory).toBe('memory-minisearch');

    // Emptying the agentLoop slot swaps only the turn: `claw agent` belongs to the agent plugin and stays.
    writeFileSync(join(stateDir, 'openclaw.json'), '{ plugins: { slots: { agentLoop: "none" } } }');
    expect(pluginCommands((await claw(['--help'], env)).stdout).agent).toBe('agent');
    // The agent plugin off: its commands go with it; plugins.enabled false: no plugin commands at all.
    writeFileSync(join(stateDir, 'openclaw.json'), '{ plugins: { entries: { agent: { enabled: false } } } }');
    expect(pluginCommands((await claw(['--help'], env)).stdout).agent).toBeUndefined();
    writeFileSync(join(stateDir, 'openclaw.json'), '{ plugins: { enabled: false } }');
    expect((await claw(['--help'], env)).stdout).not.toContain('Commands from plugins');
  });
});
