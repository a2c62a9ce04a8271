/**
 * OpenClaw's skill methods beyond skills.status against a real gateway with the skills plugin:
 * skills.bins from the skills' requirements, skills.update through the config write path,
 * plugins.skills.read over a plugin's skill folder, OpenClaw's empty shapes for ClawHub, the
 * Skill Workshop and the skill library (which claw does not have), and UNAVAILABLE for their
 * actions.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { client, startGateway, type RunningGateway, refusal } from './gateway-helpers.js';
import { REPO, tempDir, writePlugin } from './helpers.js';

let gw: RunningGateway;
let admin: GatewayClient;
let reader: GatewayClient;

function writeSkill(root: string, name: string, frontmatter: string): void {
  mkdirSync(join(root, name), { recursive: true });
  writeFileSync(join(root, name, 'SKILL.md'), `---\n${frontmatter}\n---\nbody\n`);
}

beforeAll(async () => {
  const stateDir = tempDir('claw-skill-methods-');
  writeSkill(
    join(stateDir, 'workspace', 'skills'),
    'needs-tools',
    'name: needs-tools\ndescription: d\nmetadata: { openclaw: { requires: { bins: ["zz-tool-one"], anyBins: ["zz-tool-two", "zz-tool-three"] } } }',
  );
  writeSkill(
    join(stateDir, 'workspace-work', 'skills'),
    'work-only',
    'name: work-only\ndescription: d\nmetadata: { openclaw: { requires: { bins: ["zz-work-tool"] } } }',
  );
  const pack = writePlugin(join(tempDir('claw-skill-methods-plugin-'), 'skill-pack'), {
    manifest: { id: 'skill-pack', skills: ['skills'], configSchema: { type: 'object' } },
    code: "export default { id: 'skill-pack', register() {} };\n",
    files: {
      'skills/packed/SKILL.md': '---\nname: packed\ndescription: from the plugin\n---\nUse the helper.\n',
      'skills/packed/scripts/helper.sh': 'echo helped\n',
    },
  });
  symlinkSync('/etc/hostname', join(pack, 'skills', 'packed', 'host-link'));
  gw = await startGateway({
    stateDir,
    plugins: [join(REPO, 'plugins', 'skills'), pack],
    config: { agents: { list: [{ id: 'main', default: true }, { id: 'work' }] } },
  });
  admin = await client(gw.url);
  reader = await client(gw.url, { scopes: ['operator.read'] });
}, 60_000);

afterAll(async () => {
  await reader?.close();
  await admin?.close();
  await gw?.stop();
});

describe('skills.bins', () => {
  it('lists the binaries the skills of every agent require, sorted and once each', async () => {
    const { bins } = (await reader.request('skills.bins', {})) as { bins: string[] };
    expect(bins).toEqual([...new Set(bins)].sort());
    expect(bins).toEqual(expect.arrayContaining(['zz-tool-one', 'zz-tool-two', 'zz-tool-three', 'zz-work-tool']));
  });
});

describe('ClawHub and the Skill Workshop, which claw lacks', () => {
  it('reads answer OpenClaw’s empty shapes', async () => {
    expect(await reader.request('skills.securityVerdicts', { agentId: 'work' })).toEqual({
      schema: 'openclaw.skills.security-verdicts.v1',
      items: [],
    });
    expect(await reader.request('skills.search', { query: 'weather' })).toEqual({ results: [] });
    expect(await reader.request('skills.proposals.list', {})).toEqual({
      schema: 'openclaw.skill-workshop.proposals-manifest.v1',
      updatedAt: new Date(0).toISOString(),
      proposals: [],
      installedSkills: [],
    });
  });

  it('lookups of one item say it is not there; an unknown agent is refused', async () => {
    expect(await refusal(reader.request('skills.skillCard', { skillKey: 'needs-tools' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'skill card not found for needs-tools',
    });
    expect(await refusal(reader.request('skills.proposals.inspect', { proposalId: 'p1' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'Skill proposal not found: p1',
    });
    expect((await refusal(reader.request('skills.workshop.read', { name: 'needs-tools' }))).message).toMatch(
      /^No Workshop-generated skill matched: needs-tools\. claw has no Skill Workshop/,
    );
    expect((await refusal(reader.request('skills.proposals.list', { agentId: 'ghost' }))).code).toBe('INVALID_REQUEST');
  });

  it('actions fail with UNAVAILABLE naming what is missing, admin only', async () => {
    for (const method of ['skills.install', 'skills.detail']) {
      expect(await refusal(admin.request(method, { slug: 'weather' }))).toEqual({
        code: 'UNAVAILABLE',
        message: 'claw has no skill registry (ClawHub); put skill folders in the workspace or managed skills dir',
      });
    }
    for (const method of [
      'skills.proposals.create',
      'skills.proposals.evaluate',
      'skills.proposals.apply',
      'skills.proposals.requestRevision',
    ]) {
      expect(await refusal(admin.request(method, { proposalId: 'p1' }))).toEqual({
        code: 'UNAVAILABLE',
        message: 'claw has no Skill Workshop: skills are folders with a SKILL.md you write or copy in',
      });
    }
    expect(await refusal(reader.request('skills.proposals.apply', { proposalId: 'p1' }))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.admin',
    });
  });
});

describe('skills.update', () => {
  it('writes skills.entries.<key> through the config write path and answers it with secrets redacted', async () => {
    const answer: any = await admin.request('skills.update', {
      skillKey: 'needs-tools',
      enabled: false,
      apiKey: 'sk-skill-secret',
      env: { TOOL_TOKEN: 'tok-123', EMPTY: '' },
    });
    expect(answer).toEqual({
      ok: true,
      skillKey: 'needs-tools',
      config: { enabled: false, apiKey: '__REDACTED__', env: { TOOL_TOKEN: '__REDACTED__' } },
    });
    const file = JSON.parse(readFileSync(join(gw.stateDir, 'openclaw.json'), 'utf8'));
    expect(file.skills.entries['needs-tools']).toEqual({
      enabled: false,
      apiKey: 'sk-skill-secret',
      env: { TOOL_TOKEN: 'tok-123' },
    });
    // The redaction marker sent back keeps the stored secret; an empty string removes it.
    await admin.request('skills.update', { skillKey: 'needs-tools', apiKey: '__REDACTED__', env: { TOOL_TOKEN: '' } });
    expect(JSON.parse(readFileSync(join(gw.stateDir, 'openclaw.json'), 'utf8')).skills.entries['needs-tools']).toEqual({
      enabled: false,
      apiKey: 'sk-skill-secret',
      env: {},
    });
  });

  it('refuses ClawHub updates, bad params and read scope', async () => {
    expect(await refusal(admin.request('skills.update', { source: 'clawhub', slug: 'weather' }))).toEqual({
      code: 'UNAVAILABLE',
      message: 'claw has no skill registry (ClawHub); put skill folders in the workspace or managed skills dir',
    });
    expect(await refusal(admin.request('skills.update', { skillKey: 'x', enabled: 'yes' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'skills.update: enabled must be true or false',
    });
    expect((await refusal(reader.request('skills.update', { skillKey: 'x', enabled: true }))).code).toBe('FORBIDDEN');
  });
});

describe('plugins.skills.read', () => {
  it('lists an installed plugin’s skill folder and reads its SKILL.md; symlinks are listed as nothing', async () => {
    const read: any = await reader.request('plugins.skills.read', {
      source: 'installed',
      pluginId: 'skill-pack',
      skillName: 'packed',
    });
    expect(read).toEqual({
      name: 'packed',
      rootPath: expect.stringMatching(/skill-pack\/skills\/packed$/),
      entryPath: 'SKILL.md',
      files: [
        {
          path: 'SKILL.md',
          sizeBytes: expect.any(Number),
          status: 'ready',
          content: expect.stringContaining('Use the helper.'),
        },
        { path: 'scripts/helper.sh', sizeBytes: 12, status: 'deferred' },
      ],
      directories: ['scripts'],
      inventoryComplete: true,
    });
    const helper: any = await reader.request('plugins.skills.read', {
      source: 'installed',
      pluginId: 'skill-pack',
      skillName: 'packed',
      path: 'scripts/helper.sh',
    });
    expect(helper.files[1]).toEqual({
      path: 'scripts/helper.sh',
      sizeBytes: 12,
      status: 'ready',
      content: 'echo helped\n',
    });
  });

  it('refuses paths out of the folder, unknown skills and the catalogue', async () => {
    const base = { source: 'installed', pluginId: 'skill-pack', skillName: 'packed' };
    for (const path of ['../../openclaw.plugin.json', '/etc/passwd', 'host-link']) {
      expect((await refusal(reader.request('plugins.skills.read', { ...base, path }))).code).toBe('INVALID_REQUEST');
    }
    expect(await refusal(reader.request('plugins.skills.read', { ...base, skillName: 'ghost' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'plugin "skill-pack" has no skill "ghost"',
    });
    expect(
      (
        await refusal(
          reader.request('plugins.skills.read', { source: 'catalog', catalogId: 'x', version: '1', skillName: 'y' }),
        )
      ).code,
    ).toBe('UNAVAILABLE');
  });
});

describe('the skill library, which claw lacks', () => {
  it('lists empty, has nothing to read, and refuses changes (write scope)', async () => {
    expect(await reader.request('skills.library.list', {})).toEqual({
      entries: [],
      profileId: null,
      multipleProfiles: false,
      defaultTarget: 'unavailable',
      canManageWorkspace: false,
      defaultSelectionLimit: 64,
    });
    expect((await refusal(reader.request('skills.library.read', { skillId: 's1' }))).message).toMatch(
      /^Skill library entry not found: s1\. claw has no skill library/,
    );
    for (const name of ['save', 'mutate', 'activate', 'import', 'upload']) {
      expect(await refusal(admin.request(`skills.library.${name}`, {}))).toEqual({
        code: 'UNAVAILABLE',
        message: 'claw has no skill library: skills are folders in the workspace, managed or plugin skill dirs',
      });
    }
    expect((await refusal(reader.request('skills.library.save', {}))).code).toBe('FORBIDDEN');
  });
});
