/**
 * The Docker backend end to end, through the sandbox routing step, on a real daemon
 * (DOCKER_HOST): a gateway whose agents run with `agents.defaults.sandbox.mode: "non-main"`
 * and the default `sandbox` slot holder (sandbox-docker, nothing selected in config). The
 * model's exec in a group session runs in the container, in the main session on the host;
 * `claw sandbox explain|list|recreate|build` (the real CLI, in its own process) agree with
 * what actually happened; every escape case is refused inside the container.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../sdk/index.js';
import type { DockerSandboxBackend } from '../plugins/sandbox-docker/backend.js';
import { containerNameFor, hostnameFor } from '../plugins/sandbox-docker/container.js';
import { runAgent, startAgent, type AgentHarness } from './agent-helpers.js';
import { dockerTestBackend, linkDockerDeps, requireDockerHost } from './docker-helpers.js';
import { CLI, REPO, tempDir } from './helpers.js';
import { EXEC_ESCAPES, FILE_ESCAPES } from './sandbox-escape-cases.js';
import { ESCAPE_CASES, runEscapeCases } from './escape-cases.js';

const MAIN = 'agent:main:main';
const GROUP = 'agent:main:telegram:group:7';
const PREFIX = `claw-e2e-${randomBytes(3).toString('hex')}-`;
/** No slot selected: the default holder (sandbox-docker, as in OpenClaw) must be the one used. */
const SANDBOX = { mode: 'non-main', scope: 'agent', docker: { containerPrefix: PREFIX } };

let h: AgentHarness;
let stateDir: string;
/** The same daemon, seen independently of the gateway: what really exists there. */
let docker: DockerSandboxBackend;

beforeAll(async () => {
  const dockerHost = requireDockerHost();
  docker = await dockerTestBackend({ containerPrefix: PREFIX });
  stateDir = tempDir('claw-dockerint-');
  linkDockerDeps(stateDir);
  // The CLI reads the config from disk; the gateway gets the same sandbox settings.
  writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ agents: { defaults: { sandbox: SANDBOX } } }));
  h = await startAgent({
    stateDir,
    env: { DOCKER_HOST: dockerHost },
    plugins: [join(REPO, 'plugins', 'sandbox-docker')],
    config: { agents: { defaults: { sandbox: SANDBOX } } },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  for (const info of (await docker?.list()) ?? []) await docker.remove(info.id).catch(() => {});
});

function claw(...args: string[]): Promise<any> {
  const env = { ...process.env, OPENCLAW_STATE_DIR: stateDir, OPENCLAW_CONFIG_PATH: join(stateDir, 'openclaw.json') };
  return promisify(execFile)('node', [CLI, 'sandbox', ...args, '--json'], { env }).then(({ stdout }) =>
    JSON.parse(stdout),
  );
}

function text(result: ToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function invoke(name: string, params: Record<string, unknown>, sessionKey = GROUP) {
  const context = { agentId: 'main', sessionKey, workspaceDir: h.workspace };
  return h.gw.kernel.plugins.kernelServices.tools
    .invoke({ name, params, toolCallId: `t-${randomBytes(4).toString('hex')}`, context })
    .then((outcome) => outcome.result);
}

/** The model asks for `command` through exec in `sessionKey`; returns what the tool answered. */
async function modelExec(sessionKey: string, command: string): Promise<string> {
  h.fake.reset();
  h.fake.script({ toolCalls: [{ id: 'call_1', name: 'exec', arguments: { command } }] }, { text: 'done' });
  const { final } = await runAgent(h.client, { message: 'where am I?', sessionKey });
  expect(final).toMatchObject({ status: 'ok' });
  const second = h.fake.requests.filter((request) => request.path.endsWith('/chat/completions'))[1]!;
  const messages = (second.body as { messages: Array<{ role: string; content: unknown }> }).messages;
  return String(messages.filter((message) => message.role === 'tool').at(-1)?.content ?? '');
}

/** hostname, cwd, and the network interfaces the command sees. */
const WHERE = `hostname; pwd; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ' '; echo`;

describe('Docker sandbox through the routing step (mode non-main, default slot holder)', () => {
  it('runs the model’s exec of a group session in the container, of the main session on the host; `claw sandbox explain` agrees', async () => {
    const [mainExplained, groupExplained] = await Promise.all([
      claw('explain'),
      claw('explain', '--session', 'telegram:group:7'),
    ]);
    expect(mainExplained).toMatchObject({ sessionKey: MAIN, sandboxed: false, commandsRunOn: 'host' });
    expect(groupExplained).toMatchObject({
      sessionKey: GROUP,
      sandboxed: true,
      scopeKey: 'agent:main',
      workdir: '/workspace',
      network: 'none',
      commandsRunOn: 'sandbox (sandbox-docker)',
    });

    const container = hostnameFor(containerNameFor(groupExplained.scopeKey, PREFIX));
    const [groupHost, groupCwd, groupNet] = (await modelExec(GROUP, WHERE)).split('\n');
    expect(groupHost).toBe(container);
    expect(groupCwd).toBe(groupExplained.workdir);
    expect(groupNet!.trim(), 'only the loopback interface (network "none")').toBe('lo');

    const [mainHost, mainCwd] = (await modelExec(MAIN, WHERE)).split('\n');
    expect(mainHost).toBe(hostname());
    expect(mainCwd).toBe(realpathSync(h.workspace));

    // explain's verdict matches where each command actually ran.
    for (const [explained, ranOn] of [
      [mainExplained, mainHost],
      [groupExplained, groupHost],
    ] as const) {
      expect(ranOn === container, explained.sessionKey).toBe(explained.sandboxed);
    }
  });

  it('`claw sandbox list` shows the container the session used; `recreate` removes it and the next command gets a new one', async () => {
    await invoke('exec', { command: 'true' });
    const { sandboxes } = await claw('list');
    expect(sandboxes).toHaveLength(1);
    const [listed] = sandboxes;
    expect(listed).toMatchObject({
      backend: 'docker',
      scopeKey: 'agent:main',
      agentId: 'main',
      image: 'claw-sandbox:busybox',
      running: true,
    });
    expect((await docker.list()).map((info) => info.id)).toEqual([listed.id]);

    expect(await claw('recreate', '--agent', 'main')).toEqual({ removed: [listed.id] });
    expect(await docker.list()).toEqual([]);
    expect((await claw('list')).sandboxes).toEqual([]);

    expect(text(await invoke('exec', { command: 'hostname' })).trim()).toBe(
      hostnameFor(containerNameFor('agent:main', PREFIX)),
    );
    const [again] = (await claw('list')).sandboxes;
    expect(again.id).not.toBe(listed.id);
  });

  it('`claw sandbox build` builds the image through the plugin’s service', async () => {
    const image = `claw-sandbox:e2e-${randomBytes(3).toString('hex')}`;
    try {
      expect(await claw('build', '--image', image)).toEqual({ image, builtBy: 'sandbox-docker' });
      const client = await docker.docker();
      await expect(client.getImage(image).inspect()).resolves.toBeTruthy();
    } finally {
      await (
        await docker.docker()
      )
        .getImage(image)
        .remove({ force: true })
        .catch(() => {});
    }
  }, 60_000);

  it('refuses every escape case inside the container (exec and file tools)', async () => {
    const host = tempDir('claw-dockerint-host-');
    writeFileSync(join(host, 'secret'), 'host secret\n');
    process.env.CLAW_HOST_SECRET = 'x';
    const outcomes: Array<{ name: string; refused: boolean; output: string }> = [];
    // Each command first says where it runs: a case only counts when it ran in the container.
    const ranIn = `ran-in:${hostnameFor(containerNameFor('agent:main', PREFIX))}`;
    for (const { name, command } of EXEC_ESCAPES) {
      const output = text(
        await invoke('exec', { command: `echo "ran-in:$(hostname)"; ${command.replaceAll('{{host}}', host)}` }),
      );
      outcomes.push({
        name: `exec: ${name}`,
        refused: output.split('\n').includes(ranIn) && !output.includes('ESCAPED'),
        output,
      });
    }
    for (const path of FILE_ESCAPES) {
      const result = await invoke('read', { path });
      outcomes.push({
        name: `read ${path}`,
        refused: result.isError === true && /outside the sandbox workspace/.test(text(result)),
        output: text(result),
      });
    }
    const refused = outcomes.filter((outcome) => outcome.refused).length;
    console.log(`docker sandbox escape cases refused: ${refused}/${outcomes.length}`);
    expect(
      outcomes
        .filter((outcome) => !outcome.refused)
        .map((outcome) => `${outcome.name}: ${outcome.output.slice(0, 120)}`),
    ).toEqual([]);
    expect(refused).toBe(EXEC_ESCAPES.length + FILE_ESCAPES.length);
    expect(refused).toBeGreaterThanOrEqual(18);
  });
});

describe('issue 12 escape suite (test/escape-cases.ts) under the Docker backend', () => {
  let suite: AgentHarness;
  const prefix = `claw-esc-${randomBytes(3).toString('hex')}-`;

  beforeAll(async () => {
    // The state dir one level down, so ../../escape.txt from the workspace stays in our temp dir.
    const suiteState = join(tempDir('claw-dockerint-escape-'), 'state');
    mkdirSync(suiteState, { mode: 0o700 });
    linkDockerDeps(suiteState);
    // Every session sandboxed, the agent workspace mounted read-write: the cases plant their
    // links in the very directory the container sees as /workspace.
    suite = await startAgent({
      stateDir: suiteState,
      env: { DOCKER_HOST: requireDockerHost() },
      plugins: [join(REPO, 'plugins', 'sandbox-docker')],
      config: {
        agents: {
          defaults: {
            sandbox: { mode: 'all', scope: 'agent', workspaceAccess: 'rw', docker: { containerPrefix: prefix } },
          },
        },
      },
    });
  }, 120_000);

  afterAll(async () => {
    await suite?.stop();
    const cleanup = await dockerTestBackend({ containerPrefix: prefix });
    for (const info of await cleanup.list()) await cleanup.remove(info.id).catch(() => {});
  });

  it('refuses every case (100 %)', async () => {
    const outcomes = await runEscapeCases(
      suite,
      ESCAPE_CASES,
      suite.workspace,
      /refused|outside the sandbox workspace/i,
    );
    const refused = outcomes.filter((outcome) => outcome.refused).length;
    console.log(`escape suite under sandbox-docker: ${refused}/${ESCAPE_CASES.length} refused`);
    expect(
      outcomes
        .filter((outcome) => !outcome.refused)
        .map((outcome) => `${outcome.id}: ${outcome.why} — ${outcome.result.slice(0, 160)}`),
    ).toEqual([]);
    expect(refused).toBe(ESCAPE_CASES.length);
    // The runs really went through the Docker backend: the agent's container exists.
    expect((await (await dockerTestBackend({ containerPrefix: prefix })).list()).map((info) => info.scopeKey)).toEqual([
      'agent:main',
    ]);
  }, 180_000);
});
