/**
 * The methods and events OpenClaw's shipped clients (CLI, TUI, Control UI) use, as read from the
 * installed package by scripts/openclaw-client-methods.mjs into
 * test/fixtures/openclaw-client-methods.json, and whether claw's gateway answers every one.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, generateDeviceIdentity } from '../apps/cli/gateway-client.js';
import { spawnCliGateway, type CliGateway } from './cli-gateway.js';
import { CLI, REPO, tempDir } from './helpers.js';
import { PENDING_EVENTS, PENDING_METHODS } from './openclaw-methods-pending.js';

const FIXTURE = join(REPO, 'test', 'fixtures', 'openclaw-client-methods.json');
const TOKEN = 'client-methods-token-0123456789abcdef';

interface ClientList {
  openclaw: string;
  methods: Record<string, string[]>;
  events: Record<string, string[]>;
}

const listed: ClientList = JSON.parse(readFileSync(FIXTURE, 'utf8'));

let gw: CliGateway;
let features: { methods: string[]; events: string[] };

beforeAll(async () => {
  const stateDir = tempDir('claw-client-methods-');
  writeFileSync(
    join(stateDir, 'openclaw.json'),
    JSON.stringify({ gateway: { auth: { mode: 'token', token: TOKEN } } }),
  );
  gw = await spawnCliGateway(CLI, { OPENCLAW_STATE_DIR: stateDir });
  const client = new GatewayClient({
    url: `ws://127.0.0.1:${gw.port}`,
    token: TOKEN,
    identity: generateDeviceIdentity(),
  });
  const hello = (await client.connect()) as { features: typeof features };
  features = hello.features;
  await client.close();
}, 60_000);

afterAll(async () => {
  gw?.child.kill();
  await gw?.exited;
});

describe('OpenClaw’s client method list', () => {
  it('matches what the installed OpenClaw’s clients call (regenerate with node scripts/openclaw-client-methods.mjs)', () => {
    const run = spawnSync(process.execPath, [join(REPO, 'scripts', 'openclaw-client-methods.mjs'), '--stdout'], {
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(listed);
    // The control UI alone calls hundreds: a list this short means the extraction broke.
    expect(Object.keys(listed.methods).length).toBeGreaterThan(300);
    expect(Object.keys(listed.methods)).toEqual(expect.arrayContaining(['chat.send', 'chat.startup', 'usage.cost']));
  }, 120_000);

  it('names only methods claw’s gateway answers, apart from the commented pending list', () => {
    const served = new Set(features.methods);
    const missing = Object.keys(listed.methods).filter((name) => !served.has(name) && !PENDING_METHODS.has(name));
    expect(missing, `OpenClaw’s clients call methods claw does not answer: ${missing.join(', ')}`).toEqual([]);
    const stale = [...PENDING_METHODS].filter((name) => served.has(name) || !(name in listed.methods));
    expect(stale, `drop these from test/openclaw-methods-pending.ts: ${stale.join(', ')}`).toEqual([]);
  }, 120_000);

  it('names only events claw’s gateway can send, apart from the commented pending list', () => {
    const sent = new Set(features.events);
    const missing = Object.keys(listed.events).filter((name) => !sent.has(name) && !PENDING_EVENTS.has(name));
    expect(missing, `OpenClaw’s clients listen for events claw never sends: ${missing.join(', ')}`).toEqual([]);
    const stale = [...PENDING_EVENTS].filter((name) => sent.has(name) || !(name in listed.events));
    expect(stale, `drop these from test/openclaw-methods-pending.ts: ${stale.join(', ')}`).toEqual([]);
  }, 120_000);
});
