/**
 * OpenClaw's skill methods beyond skills.status against a real gateway with the skills plugin:
 * skills.bins from the skills' requirements, OpenClaw's empty shapes for ClawHub and the Skill
 * Workshop (which claw does not have), and UNAVAILABLE for their actions.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { client, startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';

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
  gw = await startGateway({
    stateDir,
    plugins: [join(REPO, 'plugins', 'skills')],
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

async function failure(request: Promise<unknown>): Promise<Record<string, unknown>> {
  return request.then(
    (value) => ({ unexpectedSuccess: value }),
    (error: { code?: string; message?: string }) => ({ code: error.code, message: error.message }),
  );
}

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
    expect(await failure(reader.request('skills.skillCard', { skillKey: 'needs-tools' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'skill card not found for needs-tools',
    });
    expect(await failure(reader.request('skills.proposals.inspect', { proposalId: 'p1' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'Skill proposal not found: p1',
    });
    expect((await failure(reader.request('skills.workshop.read', { name: 'needs-tools' }))).message).toMatch(
      /^No Workshop-generated skill matched: needs-tools\. claw has no Skill Workshop/,
    );
    expect((await failure(reader.request('skills.proposals.list', { agentId: 'ghost' }))).code).toBe('INVALID_REQUEST');
  });

  it('actions fail with UNAVAILABLE naming what is missing, admin only', async () => {
    for (const method of ['skills.install', 'skills.detail']) {
      expect(await failure(admin.request(method, { slug: 'weather' }))).toEqual({
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
      expect(await failure(admin.request(method, { proposalId: 'p1' }))).toEqual({
        code: 'UNAVAILABLE',
        message: 'claw has no Skill Workshop: skills are folders with a SKILL.md you write or copy in',
      });
    }
    expect(await failure(reader.request('skills.proposals.apply', { proposalId: 'p1' }))).toEqual({
      code: 'FORBIDDEN',
      message: 'missing scope: operator.admin',
    });
  });
});
