/**
 * Skills (issue 14 part 5): precedence of the skill roots, gating with reasons, the compact
 * prompt list, env for exec runs (masked, only while eligible), slash commands with a
 * scripted model, hot reload without a restart, a broken SKILL.md, and `claw skills` as a
 * real process (locally and through a running gateway).
 */
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, textResult, type ModelRequest } from '../sdk/index.js';
import type { AgentService } from '../sdk/agent/index.js';
import {
  agentStackDirs,
  bundledPluginDir,
  createTestKernel,
  lastUserText,
  scriptedModel,
  type TestKernel,
} from '../sdk/testing.js';
import { useService } from '../sdk/services.js';
import type { SkillsCatalog, StatusReport } from '../plugins/skills/catalog.js';
import { boundPromptList, commandName } from '../plugins/skills/catalog.js';
import { parseSkillFile, simpleFrontMatter } from '../plugins/skills/frontmatter.js';
import { binFinder } from '../plugins/skills/gating.js';
import { claw, REPO, startCliGateway, tempDir, writePlugin } from './helpers.js';

const SKILLS = bundledPluginDir('skills');

function writeSkill(root: string, folder: string, frontMatter: string, body = 'Steps for the skill.'): string {
  mkdirSync(join(root, folder), { recursive: true });
  const file = join(root, folder, 'SKILL.md');
  writeFileSync(file, `---\n${frontMatter.trim()}\n---\n\n${body}\n`);
  return file;
}

const kernels: TestKernel[] = [];
afterEach(async () => {
  for (const kernel of kernels.splice(0)) await kernel.dispose();
});

async function boot(
  options: {
    config?: Record<string, unknown>;
    env?: Record<string, string>;
    plugins?: NonNullable<Parameters<typeof createTestKernel>[0]>['plugins'];
    stateDir?: string;
    respond?: (
      request: ModelRequest,
    ) => string | { toolCalls: Array<{ name: string; arguments: Record<string, unknown> }> };
  } = {},
) {
  const stateDir = options.stateDir ?? tempDir('claw-skills-');
  const workspace = join(stateDir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const requests: ModelRequest[] = [];
  const kernel = await createTestKernel({
    stateDir,
    env: { PATH: process.env.PATH, ...(options.env ?? {}) },
    plugins: [
      ...agentStackDirs(),
      SKILLS,
      bundledPluginDir('tools-fs'),
      bundledPluginDir('tools-exec'),
      // Host exec needs an approver (defaults: security full, ask off).
      bundledPluginDir('exec-approvals'),
      scriptedModel((request) => {
        requests.push(request);
        return options.respond ? options.respond(request) : 'ok';
      }),
      ...(options.plugins ?? []),
    ],
    config: { agents: { defaults: { model: 'scripted/x', workspace } }, ...(options.config ?? {}) },
  });
  kernels.push(kernel);
  const catalog = (await useService<SkillsCatalog>(kernel.plugins.kernelServices, 'skills'))!;
  const agent = (await useService<AgentService>(kernel.plugins.kernelServices, 'agent'))!;
  return {
    kernel,
    stateDir,
    workspace,
    catalog,
    agent,
    requests,
    report: (agentId?: string): StatusReport => catalog.report(agentId),
  };
}

const byName = (report: StatusReport, name: string) => report.skills.filter((skill) => skill.name === name);
const inUse = (report: StatusReport, name: string) => byName(report, name).find((skill) => skill.state !== 'shadowed')!;

describe('SKILL.md front matter', () => {
  it('reads names, flags and metadata.openclaw (YAML block or JSON5 string), and explains what is wrong', () => {
    const block = parseSkillFile(
      '---\nname: lab\ndescription: d\nuser-invocable: false\ndisable-model-invocation: "true"\nmetadata:\n  {\n    "openclaw":\n      {\n        "requires": { "bins": ["uv"], "env": ["K"] },\n        "primaryEnv": "K",\n      },\n  }\n---\nbody',
      'folder',
    );
    expect(block.ok && block.meta).toMatchObject({
      name: 'lab',
      userInvocable: false,
      disableModelInvocation: true,
      openclaw: { primaryEnv: 'K', requires: { bins: ['uv'], env: ['K'] } },
    });
    const json = parseSkillFile(
      '---\ndescription: d\nmetadata: \'{"clawdbot": {"os": ["linux"], "always": true}}\'\n---\n',
      'from-folder',
    );
    expect(json.ok && json.meta).toMatchObject({ name: 'from-folder', openclaw: { os: ['linux'], always: true } });
    const cases: Array<[string, RegExp]> = [
      ['no front matter here', /must start with YAML front matter/],
      ['---\nname: [unclosed\n---\n', /not valid YAML/],
      ['---\nname: x\n---\n', /description is missing/],
      ['---\nname: has space\ndescription: d\n---\n', /name "has space"/],
      ['---\ndescription: d\nuser-invocable: maybe\n---\n', /user-invocable must be true or false/],
      [
        '---\ndescription: d\nmetadata: { openclaw: { os: [plan9] } }\n---\n',
        /"plan9" is not one of darwin, linux, win32/,
      ],
      ['---\ndescription: d\ncommand-dispatch: tool\n---\n', /needs command-tool/],
      [
        '---\ndescription: d\nmetadata: { openclaw: { requires: { bins: "a/b" } } }\n---\n',
        /requires.bins has an invalid entry "a\/b"/,
      ],
    ];
    for (const [text, error] of cases) {
      const parsed = parseSkillFile(text, 'f');
      expect(parsed.ok, text).toBe(false);
      expect(!parsed.ok && parsed.error, text).toMatch(error);
    }
  });
});

describe('the YAML-free fast path', () => {
  it('reads simple front matter exactly as YAML does, and leaves anything else to YAML', async () => {
    const { parse } = await import('yaml');
    const bundled = ['daily-notes', 'commit-message', 'weather', 'skill-creator'].map(
      (name) => /^---\n([\s\S]*?)\n---/.exec(readFileSync(join(REPO, 'skills', name, 'SKILL.md'), 'utf8'))![1]!,
    );
    const simple = [
      ...bundled,
      "name: x\ndescription: 'it''s <b> & more'\nsummary: plain & <b>\nuser-invocable: false\n# comment\nhomepage: \"https://a.example/?q=1\"",
    ];
    for (const text of simple) expect(simpleFrontMatter(text), text).toEqual(parse(text));
    for (const text of [
      'name: x\nmetadata:\n  openclaw: {}',
      'description: a: b',
      'description: x # note',
      'name: 12',
      'name: yes',
      'name: &a x',
      'name: a\nname: b',
      'metadata: {openclaw: {}}',
    ]) {
      expect(simpleFrontMatter(text), text).toBeUndefined();
    }
  });
});

describe('README', () => {
  it('shows a skill in five lines that works as written', async () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const match = /```markdown\n(---\nname: standup[\s\S]*?)```/.exec(readme);
    expect(match).not.toBeNull();
    const text = match![1]!;
    expect(text.trim().split('\n')).toHaveLength(5);
    const stateDir = tempDir('claw-skills-readme-');
    mkdirSync(join(stateDir, 'workspace', 'skills', 'standup'), { recursive: true });
    writeFileSync(join(stateDir, 'workspace', 'skills', 'standup', 'SKILL.md'), text);
    const { agent, requests, report } = await boot({ stateDir });
    expect(inUse(report(), 'standup').eligible).toBe(true);
    await agent.run({ message: '/standup' });
    expect(requests[0]!.systemPrompt).toContain('<name>standup</name>');
    expect(lastUserText(requests[0]!)).toContain('Use the "standup" skill');
  });
});

describe('skill roots', () => {
  it('workspace overrides managed, managed overrides bundled, bundled overrides plugin skills, plugin skills override extraDirs', async () => {
    const stateDir = tempDir('claw-skills-prec-');
    const workspace = join(stateDir, 'workspace');
    const extra = tempDir('claw-skills-extra-');
    // weather: workspace beats the bundled copy; daily-notes: managed beats bundled;
    // commit-message: bundled beats extraDirs; shipped: a plugin's beats extraDirs.
    writeSkill(join(workspace, 'skills'), 'weather', 'name: weather\ndescription: my own weather');
    writeSkill(join(stateDir, 'skills'), 'weather', 'name: weather\ndescription: managed weather');
    writeSkill(join(stateDir, 'skills'), 'daily-notes', 'name: daily-notes\ndescription: managed notes');
    writeSkill(extra, 'commit-message', 'name: commit-message\ndescription: extra commits');
    writeSkill(extra, 'shipped', 'name: shipped\ndescription: extra copy');
    writeSkill(join(extra, 'group', 'nested'), 'deep', 'name: deep\ndescription: grouped layout');
    const plugin = writePlugin(join(tempDir('claw-skills-plugin-'), 'skill-shipper'), {
      manifest: { id: 'skill-shipper', skills: ['skills'], configSchema: { type: 'object' } },
      code: "export default { id: 'skill-shipper', register() {} };\n",
      files: { 'skills/shipped/SKILL.md': '---\nname: shipped\ndescription: from the plugin\n---\nbody\n' },
    });
    const { report } = await boot({
      stateDir,
      plugins: [plugin],
      config: { skills: { load: { extraDirs: [extra] } } },
    });
    const status = report();
    expect(inUse(status, 'weather')).toMatchObject({
      source: 'workspace',
      description: 'my own weather',
      eligible: true,
    });
    expect(byName(status, 'weather').map((skill) => [skill.source, skill.state])).toEqual([
      ['workspace', 'eligible'],
      ['managed', 'shadowed'],
      ['bundled', 'shadowed'],
    ]);
    expect(inUse(status, 'daily-notes')).toMatchObject({ source: 'managed', description: 'managed notes' });
    expect(inUse(status, 'commit-message').source).toBe('bundled');
    expect(byName(status, 'commit-message').find((skill) => skill.source === 'extra')!.reasons[0]).toMatch(
      /^overridden by bundled: /,
    );
    expect(inUse(status, 'shipped')).toMatchObject({
      source: 'plugin',
      pluginId: 'skill-shipper',
      description: 'from the plugin',
    });
    expect(inUse(status, 'deep')).toMatchObject({ source: 'extra', eligible: true });
    // Each agent reads its own workspace.
    const other = report('main');
    expect(other.workspaceDir).toBe(workspace);
  });

  it('gives each agent its own workspace skills', async () => {
    const stateDir = tempDir('claw-skills-agents-');
    const work = join(stateDir, 'work-ws');
    writeSkill(join(work, 'skills'), 'only-work', 'name: only-work\ndescription: for the work agent');
    const { report } = await boot({
      stateDir,
      config: {
        agents: {
          defaults: { model: 'scripted/x' },
          list: [
            { id: 'main', default: true },
            { id: 'work', workspace: work },
          ],
        },
      },
    });
    expect(byName(report('work'), 'only-work')).toHaveLength(1);
    expect(byName(report('main'), 'only-work')).toHaveLength(0);
  });
});

describe('gating', () => {
  it('says why each skill cannot be used', async () => {
    const stateDir = tempDir('claw-skills-gate-');
    const root = join(stateDir, 'workspace', 'skills');
    const other = process.platform === 'darwin' ? 'linux' : 'darwin';
    writeSkill(
      root,
      'needs-bin',
      'name: needs-bin\ndescription: d\nmetadata: { openclaw: { requires: { bins: ["sh", "no-such-binary-xyz"] } } }',
    );
    writeSkill(
      root,
      'any-bin',
      'name: any-bin\ndescription: d\nmetadata: { openclaw: { requires: { anyBins: ["no-such-binary-xyz", "sh"] } } }',
    );
    writeSkill(
      root,
      'no-any-bin',
      'name: no-any-bin\ndescription: d\nmetadata: { openclaw: { requires: { anyBins: ["no-such-a", "no-such-b"] } } }',
    );
    writeSkill(
      root,
      'needs-env',
      'name: needs-env\ndescription: d\nmetadata: { openclaw: { requires: { env: ["SKILL_TEST_UNSET"] } } }',
    );
    writeSkill(
      root,
      'env-from-config',
      'name: env-from-config\ndescription: d\nmetadata: { openclaw: { requires: { env: ["FROM_CONFIG"] } } }',
    );
    writeSkill(
      root,
      'env-from-kernel',
      'name: env-from-kernel\ndescription: d\nmetadata: { openclaw: { requires: { env: ["PRESENT_VAR"] } } }',
    );
    writeSkill(
      root,
      'keyed',
      'name: keyed\ndescription: d\nmetadata: { openclaw: { primaryEnv: "KEYED_API_KEY", requires: { env: ["KEYED_API_KEY"] } } }',
    );
    writeSkill(
      root,
      'keyless',
      'name: keyless\ndescription: d\nmetadata: { openclaw: { primaryEnv: "KEYLESS_API_KEY", requires: { env: ["KEYLESS_API_KEY"] } } }',
    );
    writeSkill(
      root,
      'needs-config',
      'name: needs-config\ndescription: d\nmetadata: { openclaw: { requires: { config: ["browser.enabled"] } } }',
    );
    writeSkill(
      root,
      'has-config',
      'name: has-config\ndescription: d\nmetadata: { openclaw: { requires: { config: ["tools.profile"] } } }',
    );
    writeSkill(
      root,
      'other-os',
      `name: other-os\ndescription: d\nmetadata: { openclaw: { os: ["${other}"], always: true } }`,
    );
    writeSkill(
      root,
      'always',
      'name: always\ndescription: d\nmetadata: { openclaw: { always: true, requires: { bins: ["no-such-binary-xyz"], env: ["SKILL_TEST_UNSET"] } } }',
    );
    writeSkill(root, 'off', 'name: off\ndescription: d');
    writeSkill(root, 'keyed-by', 'name: keyed-by\ndescription: d\nmetadata: { openclaw: { skillKey: "custom-key" } }');
    const { report } = await boot({
      stateDir,
      env: { PRESENT_VAR: 'yes' },
      config: {
        tools: { profile: 'coding' },
        skills: {
          allowBundled: ['daily-notes'],
          entries: {
            'env-from-config': { env: { FROM_CONFIG: '1' } },
            keyed: { apiKey: 'sk-keyed-secret-123456' },
            off: { enabled: false },
            'custom-key': { enabled: false },
          },
        },
      },
    });
    const status = report();
    const gate = (name: string) => {
      const skill = inUse(status, name);
      return [skill.state, skill.reasons.join(' | ')];
    };
    expect(gate('needs-bin')).toEqual(['missing', 'missing on PATH: no-such-binary-xyz']);
    expect(gate('any-bin')).toEqual(['eligible', '']);
    expect(gate('no-any-bin')).toEqual(['missing', 'needs one of these on PATH: no-such-a, no-such-b']);
    expect(gate('needs-env')).toEqual(['missing', 'missing env: SKILL_TEST_UNSET (or skills.entries.needs-env.env)']);
    expect(gate('env-from-config')[0]).toBe('eligible');
    expect(gate('env-from-kernel')[0]).toBe('eligible');
    expect(gate('keyed')[0]).toBe('eligible');
    expect(gate('keyless')).toEqual(['missing', 'missing env: KEYLESS_API_KEY (or skills.entries.keyless.apiKey)']);
    expect(gate('needs-config')).toEqual(['missing', 'config not set: browser.enabled']);
    expect(gate('has-config')[0]).toBe('eligible');
    expect(gate('other-os')).toEqual(['missing', `only for ${other} (this host is ${process.platform})`]);
    expect(gate('always')[0]).toBe('eligible');
    expect(gate('off')).toEqual(['disabled', 'disabled in config (skills.entries.off.enabled is false)']);
    expect(gate('keyed-by')).toEqual(['disabled', 'disabled in config (skills.entries.custom-key.enabled is false)']);
    expect(gate('weather')).toEqual(['blocked', 'bundled, and not in skills.allowBundled']);
    expect(gate('daily-notes')[0]).toBe('eligible');
    expect(inUse(status, 'needs-bin').missing.bins).toEqual(['no-such-binary-xyz']);
  });

  it("hides skills outside the agent's allowlist", async () => {
    const { report } = await boot({ config: { agents: { defaults: { model: 'scripted/x', skills: ['weather'] } } } });
    const status = report();
    expect(inUse(status, 'weather').state).toBe('eligible');
    expect(inUse(status, 'daily-notes').state).toBe('excluded');
  });

  it('lists a broken SKILL.md as invalid with its reason, and loads the rest', async () => {
    const stateDir = tempDir('claw-skills-broken-');
    const root = join(stateDir, 'workspace', 'skills');
    const broken = writeSkill(root, 'broken', 'name: broken\ndescription: [oops');
    mkdirSync(join(root, 'empty-front'), { recursive: true });
    writeFileSync(join(root, 'empty-front', 'SKILL.md'), 'Just text, no front matter.\n');
    writeSkill(root, 'fine', 'name: fine\ndescription: still works');
    // A symlinked skill folder must stay inside the workspace's skills/.
    const outside = tempDir('claw-skills-outside-');
    writeSkill(outside, 'escaped', 'name: escaped\ndescription: lives elsewhere');
    symlinkSync(join(outside, 'escaped'), join(root, 'escaped'));
    const { report, agent, requests } = await boot({ stateDir });
    expect(inUse(report(), 'escaped')).toMatchObject({ state: 'invalid' });
    expect(inUse(report(), 'escaped').reasons[0]).toMatch(
      /leads outside .*symlinked skills must stay inside their root/,
    );
    const status = report();
    expect(inUse(status, 'broken')).toMatchObject({ state: 'invalid', filePath: broken });
    expect(inUse(status, 'broken').reasons[0]).toMatch(/front matter is not valid YAML/);
    expect(inUse(status, 'empty-front').reasons[0]).toMatch(/must start with YAML front matter/);
    expect(inUse(status, 'fine').eligible).toBe(true);
    await agent.run({ message: 'hi' });
    expect(requests[0]!.systemPrompt).toContain('<name>fine</name>');
    expect(requests[0]!.systemPrompt).not.toContain('<name>broken</name>');
  });
});

describe('the system prompt', () => {
  it('lists only eligible, model-invocable skills by name, description and path — never their instructions', async () => {
    const stateDir = tempDir('claw-skills-prompt-');
    const root = join(stateDir, 'workspace', 'skills');
    const listed = writeSkill(
      root,
      'listed',
      'name: listed\ndescription: Use <this> & that',
      'SECRET-INSTRUCTIONS-BODY',
    );
    writeSkill(root, 'user-only', 'name: user-only\ndescription: only by slash\ndisable-model-invocation: true');
    writeSkill(
      root,
      'gated',
      'name: gated\ndescription: gated\nmetadata: { openclaw: { requires: { bins: ["no-such-binary-xyz"] } } }',
    );
    writeSkill(root, 'turned-off', 'name: turned-off\ndescription: off');
    const { agent, requests } = await boot({
      stateDir,
      config: { skills: { entries: { 'turned-off': { enabled: false } } } },
    });
    await agent.run({ message: 'hello' });
    const prompt = requests[0]!.systemPrompt!;
    expect(prompt).toContain(
      `<skill>\n    <name>listed</name>\n    <description>Use &lt;this&gt; &amp; that</description>\n    <location>${listed}</location>\n  </skill>`,
    );
    expect(prompt).toContain('<name>weather</name>');
    for (const absent of ['user-only', 'gated', 'turned-off', 'SECRET-INSTRUCTIONS-BODY'])
      expect(prompt).not.toContain(absent);
  });

  it('stays within skills.limits.maxSkillsPromptChars', async () => {
    const skills = Array.from({ length: 6 }, (_, index) => ({
      name: `s${index}`,
      description: 'x'.repeat(200),
      location: `/skills/s${index}/SKILL.md`,
    }));
    const full = boundPromptList(skills, 100_000);
    expect(full).toMatchObject({ omitted: [], shortened: 0 });
    expect(full.chars).toBe(195 + 6 * (97 + 2 + 200 + 19));
    const shortened = boundPromptList(skills, 1500);
    expect(shortened.omitted).toEqual([]);
    expect(shortened.shortened).toBe(6);
    expect(shortened.chars).toBeLessThanOrEqual(1500);
    expect(shortened.list.every((skill) => skill.description.endsWith('…'))).toBe(true);
    const cut = boundPromptList(skills, 195 + 2 * (97 + 2 + 19));
    expect(cut.list.map((skill) => skill.name)).toEqual(['s0', 's1']);
    expect(cut.omitted).toEqual(['s2', 's3', 's4', 's5']);

    const { agent, requests, report } = await boot({ config: { skills: { limits: { maxSkillsPromptChars: 500 } } } });
    await agent.run({ message: 'hi' });
    const status = report();
    expect(status.prompt.chars).toBeLessThanOrEqual(500);
    expect(status.prompt.omitted.length).toBeGreaterThan(0);
    for (const name of status.prompt.omitted) expect(requests[0]!.systemPrompt).not.toContain(`<name>${name}</name>`);
  });
});

describe('env for exec runs', () => {
  it("adds skills.entries env and apiKey to the agent's exec calls while the skill is eligible, masked in what the model sees", async () => {
    const stateDir = tempDir('claw-skills-env-');
    const root = join(stateDir, 'workspace', 'skills');
    writeSkill(
      root,
      'keyed',
      'name: keyed\ndescription: d\nmetadata: { openclaw: { primaryEnv: "KEYED_API_KEY", requires: { env: ["KEYED_API_KEY"] } } }',
    );
    const secret = 'sk-skill-secret-7f3a9c';
    const results: string[] = [];
    let command = 'echo "key=$KEYED_API_KEY plain=$SKILL_PLAIN given=$GIVEN"';
    const { agent, kernel } = await boot({
      stateDir,
      config: {
        skills: { entries: { keyed: { apiKey: secret, env: { SKILL_PLAIN: 'plain-value', GIVEN: 'from-skill' } } } },
      },
      respond: (request) => {
        const last = request.messages.at(-1)!;
        if (last.role === 'toolResult') {
          results.push(JSON.stringify(last.content));
          return 'done';
        }
        return { toolCalls: [{ name: 'exec', arguments: { command, env: { GIVEN: 'from-call' } } }] };
      },
    });
    await agent.run({ message: 'run it' });
    expect(results.at(-1)).toContain('key=*** plain=plain-value given=from-call');
    expect(results.at(-1)).not.toContain(secret);
    // Not an agent turn (no run): nothing is added.
    const direct = await kernel.runTool('exec', { command: 'echo "key=[$KEYED_API_KEY]"' }, { agentId: 'main' });
    expect(JSON.stringify(direct.content)).toContain('key=[]');
    // Disabled: no longer eligible, so no longer injected (config is read afresh).
    command = 'echo "key=[$KEYED_API_KEY] plain=[$SKILL_PLAIN]"';
    const config = kernel.plugins.kernelServices.config() as {
      skills: { entries: Record<string, Record<string, unknown>> };
    };
    config.skills.entries.keyed!.enabled = false;
    await agent.run({ message: 'again' });
    expect(results.at(-1)).toContain('key=[] plain=[]');
  });
});

describe('env for sandboxed runs', () => {
  it('gives nothing to a sandboxed exec call (host runs only), unless it is elevated', async () => {
    const { catalog } = await boot({
      config: {
        agents: { defaults: { model: 'scripted/x', sandbox: { mode: 'all' } } },
        skills: { entries: { 'daily-notes': { env: { NOTES_UNITS_X: 'metric' } } } },
      },
    });
    expect(catalog.execEnv('main', 'agent:main:main', {})).toBeUndefined();
    expect(catalog.execEnv('main', 'agent:main:main', { elevated: true })).toEqual({ NOTES_UNITS_X: 'metric' });
  });
});

describe('slash commands', () => {
  it('runs the agent with an instruction to use the skill, lists skills in /help, and keeps built-in names', async () => {
    const stateDir = tempDir('claw-skills-cmd-');
    const root = join(stateDir, 'workspace', 'skills');
    const status = writeSkill(root, 'status', 'name: status\ndescription: a skill named like a built-in');
    const hidden = writeSkill(root, 'no-slash', 'name: no-slash\ndescription: d\nuser-invocable: false');
    const userOnly = writeSkill(
      root,
      'user-only',
      'name: user-only\ndescription: runs only when asked\ndisable-model-invocation: true',
    );
    const { agent, requests } = await boot({
      stateDir,
      config: { skills: { entries: { 'user-only': { config: { style: 'terse' } } } } },
    });

    const help = await agent.run({ message: '/help' });
    expect(help.text).toContain('/weather — Current weather');
    expect(help.text).toContain('/daily_notes — Keep a daily log');
    expect(help.text).toContain('/status_2 — a skill named like a built-in');
    expect(help.text).toContain('/user_only — runs only when asked');
    expect(help.text).not.toContain('no_slash');
    expect(requests).toHaveLength(0);

    await agent.run({ message: '/user-only summarise my day' });
    expect(requests).toHaveLength(1);
    const asked = lastUserText(requests[0]!);
    expect(asked).toContain('Use the "user-only" skill for this request');
    expect(asked).toContain(userOnly);
    expect(asked).toContain('{"style":"terse"}');
    expect(asked).toContain('Request: summarise my day');

    await agent.run({ message: '/status_2 go' });
    expect(lastUserText(requests[1]!)).toContain(status);
    // /status is still the built-in: no model call.
    const builtin = await agent.run({ message: '/status' });
    expect(builtin.text).toContain('🦞 claw');
    expect(requests).toHaveLength(2);

    await agent.run({ message: '/skill weather Paris' });
    expect(lastUserText(requests[2]!)).toMatch(/"weather" skill[\s\S]*Request: Paris/);
    const unknown = await agent.run({ message: '/skill no-slash' });
    expect(unknown.text).toContain('No usable skill "no-slash"');
    const direct = await agent.run({ message: '/no-slash hi' });
    expect(requests).toHaveLength(4);
    expect(lastUserText(requests[3]!)).toBe('/no-slash hi');
    expect(direct.status).toBe('ok');
    expect(readFileSync(hidden, 'utf8')).toContain('no-slash');
  });

  it('dispatches command-dispatch: tool straight to the tool', async () => {
    const stateDir = tempDir('claw-skills-tool-');
    writeSkill(
      join(stateDir, 'workspace', 'skills'),
      'shout',
      'name: shout\ndescription: d\ncommand-dispatch: tool\ncommand-tool: shout_tool',
    );
    const shout = definePlugin({
      id: 'shout-plugin',
      register(api) {
        api.registerTool({
          name: 'shout_tool',
          description: 'Shouts',
          parameters: {
            type: 'object',
            properties: { command: { type: 'string' }, commandName: { type: 'string' }, skillName: { type: 'string' } },
          },
          execute: (params: { command: string; commandName: string; skillName: string }) =>
            textResult(`${params.command.toUpperCase()} (${params.commandName}/${params.skillName})`),
        });
      },
    });
    const { agent, requests } = await boot({ stateDir, plugins: [shout] });
    const result = await agent.run({ message: '/shout hello there' });
    expect(result.text).toBe('HELLO THERE (shout/shout)');
    expect(requests).toHaveLength(0);
  });

  it('names commands in a-z0-9_ within 32 characters, suffixing clashes', () => {
    expect(commandName('Git-Commit.Helper', new Set())).toBe('git_commit_helper');
    expect(commandName('help', new Set(['help']))).toBe('help_2');
    expect(commandName('x'.repeat(40), new Set(['x'.repeat(32)]))).toBe(`${'x'.repeat(30)}_2`);
  });
});

describe('hot reload', () => {
  async function nextPrompt(agent: AgentService, requests: ModelRequest[]): Promise<string> {
    await agent.run({ message: 'next' });
    return requests.at(-1)!.systemPrompt!;
  }

  it('picks up a new, edited or removed SKILL.md on the next turn without a restart (watcher)', async () => {
    const stateDir = tempDir('claw-skills-watch-');
    const workspace = join(stateDir, 'workspace');
    const { agent, requests, kernel } = await boot({ stateDir, config: { skills: { load: { watchDebounceMs: 30 } } } });
    const changes: unknown[] = [];
    kernel.plugins.kernelServices.protocol.onEmit((event) => {
      if (event.event === 'skills.changed') changes.push(event.payload);
    });
    expect(await nextPrompt(agent, requests)).not.toContain('fresh-skill');
    // The workspace has no skills/ yet: creating it must be noticed too.
    writeSkill(join(workspace, 'skills'), 'fresh-skill', 'name: fresh-skill\ndescription: first version');
    await waitFor(async () => (await nextPrompt(agent, requests)).includes('first version'));
    writeSkill(join(workspace, 'skills'), 'fresh-skill', 'name: fresh-skill\ndescription: second version');
    await waitFor(async () => (await nextPrompt(agent, requests)).includes('second version'));
    rmSync(join(workspace, 'skills', 'fresh-skill'), { recursive: true });
    await waitFor(async () => !(await nextPrompt(agent, requests)).includes('fresh-skill'));
    expect(changes).toContainEqual({ reason: 'watch' });
  });

  it('with skills.load.watch off, a session keeps its skills until the next session', async () => {
    const stateDir = tempDir('claw-skills-nowatch-');
    const workspace = join(stateDir, 'workspace');
    const { agent, requests } = await boot({ stateDir, config: { skills: { load: { watch: false } } } });
    await agent.run({ message: 'one' });
    writeSkill(join(workspace, 'skills'), 'later', 'name: later\ndescription: added mid-session');
    // No wait needed: with watching off the next turn reuses the session's snapshot whenever it runs.
    await agent.run({ message: 'two' });
    expect(requests.at(-1)!.systemPrompt).not.toContain('added mid-session');
    await agent.run({ message: '/new' });
    expect(requests.at(-1)!.systemPrompt).toContain('added mid-session');
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out waiting for the skills to change');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('claw skills (real process)', () => {
  function env(stateDir: string, extra: Record<string, string> = {}): Record<string, string> {
    return { OPENCLAW_STATE_DIR: stateDir, ...extra };
  }

  it('lists, shows and checks skills without a gateway', async () => {
    const stateDir = tempDir('claw-skills-cli-');
    const root = join(stateDir, 'workspace', 'skills');
    writeSkill(
      root,
      'needs-key',
      'name: needs-key\ndescription: wants a key\nmetadata: { openclaw: { emoji: "🔑", primaryEnv: "NEEDS_API_KEY", requires: { env: ["NEEDS_API_KEY"] } } }',
    );
    writeSkill(root, 'broken', 'name: broken\ndescription: [oops');
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      JSON.stringify({ skills: { entries: { weather: { enabled: false } } } }),
    );

    const list = await claw(['skills', 'list', '--verbose'], env(stateDir));
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/✗ missing\s+🔑 needs-key\s+workspace\s+wants a key/);
    expect(list.stdout).toContain('↳ missing env: NEEDS_API_KEY (or skills.entries.needs-key.apiKey)');
    expect(list.stdout).toMatch(/⏸ disabled\s+🌦️ weather/);
    expect(list.stdout).toMatch(/⚠ invalid\s+· broken/);

    const eligible = await claw(['skills', 'list', '--eligible', '--json'], env(stateDir));
    const names = (JSON.parse(eligible.stdout) as StatusReport).skills.map((skill) => skill.name).sort();
    expect(names).toEqual(
      ['commit-message', 'daily-notes', 'skill-creator'].filter((name) => name !== 'commit-message' || hasGit()),
    );

    const info = await claw(['skills', 'info', 'needs-key'], env(stateDir));
    expect(info.stdout).toContain('API key:     NEEDS_API_KEY (skills.entries.needs-key.apiKey is not set)');
    expect(info.stdout).toContain('Requires:    env: NEEDS_API_KEY');
    const missing = await claw(['skills', 'info', 'nope'], env(stateDir));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no skill "nope"');

    const check = await claw(['skills', 'check', '--json'], env(stateDir));
    const summary = JSON.parse(check.stdout) as {
      disabled: string[];
      missingRequirements: Array<{ name: string; missing: { env: string[] } }>;
      invalid: Array<{ name: string; reason: string }>;
    };
    expect(summary.disabled).toEqual(['weather']);
    expect(summary.missingRequirements).toEqual([
      expect.objectContaining({ name: 'needs-key', missing: expect.objectContaining({ env: ['NEEDS_API_KEY'] }) }),
    ]);
    expect(summary.invalid[0]).toMatchObject({ name: 'broken' });
    const text = await claw(['skills', 'check'], env(stateDir));
    expect(text.stdout).toContain('Missing requirements:\n  needs-key: missing env: NEEDS_API_KEY');

    const bad = await claw(['skills', 'frobnicate'], env(stateDir));
    expect(bad.code).toBe(2);
    const badAgent = await claw(['skills', 'list', '--agent', 'ghost'], env(stateDir));
    expect(badAgent.code).toBe(2);
    expect(badAgent.stderr).toContain('unknown agent "ghost"');
  }, 90_000);

  it('asks the running gateway when there is one', async () => {
    const stateDir = tempDir('claw-skills-cli-gw-');
    writeSkill(
      join(stateDir, 'workspace', 'skills'),
      'gw-only',
      'name: gw-only\ndescription: d\nmetadata: { openclaw: { requires: { env: ["ONLY_IN_GATEWAY"] } } }',
    );
    // Only the gateway's environment has the variable: a ready skill proves the answer came from it.
    await startCliGateway(env(stateDir, { ONLY_IN_GATEWAY: '1' }));
    const list = await claw(['skills', 'list', '--json'], env(stateDir));
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as StatusReport).skills.find((skill) => skill.name === 'gw-only')!.eligible).toBe(
      true,
    );
  });
});

function hasGit(): boolean {
  return binFinder(process.env.PATH)('git');
}
