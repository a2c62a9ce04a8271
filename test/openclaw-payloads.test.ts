/**
 * claw's CLI against an OpenClaw gateway: `claw health` and `claw status` read the payloads a
 * real OpenClaw 2026.9.6 gateway answered (recorded in test/fixtures/openclaw-payloads/)
 * as well as claw's own, and the CLI connects with a client id on OpenClaw's fixed list.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { healthLines, healthOk, statusLines } from '../plugins/gateway/health-text.js';
import { CLI_CLIENT_ID } from '../sdk/index.js';
import { REPO } from './helpers.js';

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(REPO, 'test', 'fixtures', 'openclaw-payloads', name), 'utf8'));

describe('reading an OpenClaw gateway', () => {
  it('claw health summarises OpenClaw’s health snapshot', () => {
    const health = fixture('health.json');
    expect(healthOk(health)).toBe(true);
    expect(healthLines(health)).toEqual([
      `Gateway ok · probe ${health.durationMs} ms`,
      '  agents     main (default)',
      '  sessions   0',
      `  plugins    ${health.plugins.loaded.length} loaded`,
      '  heartbeat  every 30m 0s',
    ]);
    expect(healthOk({ ...health, ok: false })).toBe(false);
  });

  it('claw status summarises OpenClaw’s status', () => {
    const status = fixture('status.json');
    expect(statusLines(status)).toEqual(['OpenClaw gateway 2026.9.6', '  agent      main (default)', '  sessions   0']);
    expect(statusLines({ ...status, channelSummary: ['telegram default: running'] })).toContain(
      '  channel    telegram default: running',
    );
  });

  it('still reads claw’s own snapshots, and survives a payload of any shape', () => {
    const claw = {
      ok: true,
      status: 'ok',
      uptimeMs: 61_000,
      version: '0.1.0',
      connections: 2,
      plugins: { total: 9, enabled: 8, loaded: 5, failed: [] },
      memory: { rssBytes: 80e6 },
      eventLoopDelayMs: 1.5,
    };
    expect(healthLines(claw)[0]).toBe('Gateway ok · up 1m 1s · claw 0.1.0');
    expect(healthOk({ ...claw, status: 'degraded' })).toBe(false);
    for (const odd of [null, 42, 'x', [], { plugins: 'x' }]) {
      expect(() => healthLines(odd)).not.toThrow();
      expect(() => statusLines(odd)).not.toThrow();
    }
  });

  it('connects as "cli", a client id OpenClaw’s gateways accept', () => {
    expect(CLI_CLIENT_ID).toBe('cli');
  });
});
