/**
 * Redelivered channel messages after a restart: the pipeline remembers, on disk, the
 * messages the intake journal accepted, and only those.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IntakeClosedError } from '../sdk/agent/index.js';
import type { InboundMessage } from '../sdk/index.js';
import { InboundPipeline, type PipelineDeps } from '../plugins/channels/pipeline.js';
import type { ChannelAccess } from '../plugins/channels/access.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function pipeline(
  seenFile: string,
  dispatched: string[],
  options: { closed?: boolean; now?: () => number } = {},
): InboundPipeline {
  const access = {
    checkDm: () => ({ allow: true }),
    checkGroup: () => ({ allow: true }),
    isOwner: () => true,
  } as unknown as ChannelAccess;
  const deps: PipelineDeps = {
    config: () => ({}) as never,
    access,
    logger: { info() {}, warn() {}, error() {}, debug() {} } as never,
    agent: async () =>
      ({
        dispatch: async (input: { messageId?: string }) => {
          if (options.closed) throw new IntakeClosedError('the gateway is stopping');
          dispatched.push(input.messageId!);
          return { runId: 'r', status: 'accepted', done: new Promise(() => {}) };
        },
      }) as never,
    findChannel: async () => undefined,
    send: async () => ({ delivered: true }) as never,
    seenFile,
    ...(options.now ? { now: options.now } : {}),
  };
  return new InboundPipeline(deps);
}

const dm = (messageId: string): InboundMessage => ({
  accountId: 'default',
  peer: { kind: 'direct', id: '+15550001' },
  sender: { id: '+15550001' },
  text: 'hi',
  messageId,
  mentioned: false,
});

describe('channel dedupe across restarts', () => {
  it('a message accepted before a restart is a duplicate after it; one never accepted is taken', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'claw-seen-'));
    dirs.push(dir);
    const file = join(dir, 'channels', 'inbound-seen.log');
    const first: string[] = [];
    const before = pipeline(file, first);
    expect((await before.handle('whatsapp', dm('A'))).status).not.toBe('duplicate');
    expect((await before.handle('whatsapp', dm('A'))).status).toBe('duplicate');
    // The gateway was stopping: B was refused, so the platform will send it again.
    expect((await pipeline(file, [], { closed: true }).handle('whatsapp', dm('B'))).status).toBe('unavailable');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'channels')).mode & 0o777).toBe(0o700);
    // Keys are hashed: the file names no one.
    expect(readFileSync(file, 'utf8')).not.toContain('15550001');

    const after: string[] = [];
    const restarted = pipeline(file, after);
    expect((await restarted.handle('whatsapp', dm('A'))).status).toBe('duplicate');
    expect((await restarted.handle('whatsapp', dm('B'))).status).not.toBe('duplicate');
    // The same id on another channel is another message.
    expect((await restarted.handle('telegram', dm('A'))).status).not.toBe('duplicate');
    expect(first).toEqual(['A']);
    expect(after).toEqual(['B', 'A']);
  });

  it('forgets after the dedupe window and survives a torn last line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'claw-seen-'));
    dirs.push(dir);
    const file = join(dir, 'inbound-seen.log');
    let now = 1_000_000;
    await pipeline(file, [], { now: () => now }).handle('discord', dm('X'));
    const { appendFileSync } = await import('node:fs');
    appendFileSync(file, 'deadbeef 12');
    // A record after the torn line is still read back.
    await pipeline(file, [], { now: () => now }).handle('discord', dm('Y'));
    expect((await pipeline(file, [], { now: () => now }).handle('discord', dm('Y'))).status).toBe('duplicate');
    now += 21 * 60_000;
    const later: string[] = [];
    expect((await pipeline(file, later, { now: () => now }).handle('discord', dm('X'))).status).not.toBe('duplicate');
    expect(later).toEqual(['X']);
  });
});
