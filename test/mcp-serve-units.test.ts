/**
 * `claw mcp serve` in parts: the event queue (cursors, the bounded window and its `gap`, long
 * polls), which sessions are conversations, and the bridge against a scripted gateway link.
 */
import { describe, expect, it } from 'vitest';
import { EventQueue } from '../plugins/mcp/serve/queue.js';
import { toConversation } from '../plugins/mcp/serve/conversations.js';
import { ChannelBridge, type GatewayLink } from '../plugins/mcp/serve/bridge.js';
import { waitFor } from './helpers.js';

describe('the live event queue', () => {
  it('numbers events, filters by cursor and session, and says when a reader fell behind the window', () => {
    const queue = new EventQueue(3);
    for (const sessionKey of ['a', 'b', 'a', 'b', 'a']) queue.push({ type: 'message', sessionKey });
    // Events 1 and 2 were dropped: a reader after cursor 0 is told where the window starts.
    expect(queue.poll({ afterCursor: 0 }, 10)).toEqual({
      events: [
        { type: 'message', sessionKey: 'a', cursor: 3 },
        { type: 'message', sessionKey: 'b', cursor: 4 },
        { type: 'message', sessionKey: 'a', cursor: 5 },
      ],
      nextCursor: 5,
      gap: { requested_after_cursor: 0, oldest_available_cursor: 3 },
    });
    expect(queue.poll({ afterCursor: 2, sessionKey: 'a' }, 1)).toEqual({
      events: [{ type: 'message', sessionKey: 'a', cursor: 3 }],
      nextCursor: 3,
    });
    expect(queue.poll({ afterCursor: 5 }, 10)).toEqual({ events: [], nextCursor: 5 });
    expect(queue.poll({ afterCursor: 0, sessionKey: 'c' }, 10)).toEqual({
      events: [],
      nextCursor: 2,
      gap: { requested_after_cursor: 0, oldest_available_cursor: 3 },
    });
  });

  it('a wait returns the next matching event, a known gap at once, and nothing once aborted or closed', async () => {
    const queue = new EventQueue(2);
    const waiting = queue.wait({ afterCursor: 0, sessionKey: 'b' }, 60_000);
    queue.push({ type: 'message', sessionKey: 'a' });
    queue.push({ type: 'message', sessionKey: 'b' });
    expect(await waiting).toEqual({ event: { type: 'message', sessionKey: 'b', cursor: 2 } });
    queue.push({ type: 'message', sessionKey: 'a' });
    expect(await queue.wait({ afterCursor: 0, sessionKey: 'c' }, 60_000)).toEqual({
      event: null,
      gap: { requested_after_cursor: 0, oldest_available_cursor: 2 },
    });
    const controller = new AbortController();
    const aborted = queue.wait({ afterCursor: 3 }, 60_000, controller.signal);
    controller.abort();
    expect(await aborted).toEqual({ event: null });
    const closing = queue.wait({ afterCursor: 3 }, 60_000);
    queue.close();
    expect(await closing).toEqual({ event: null });
  });
});

describe('which sessions are conversations', () => {
  it('needs a channel and a recipient, from the delivery context, the last route or the origin', () => {
    expect(toConversation({ key: 'agent:main:main', updatedAt: 5 })).toBeNull();
    expect(toConversation({ key: 'k', lastChannel: 'webchat' })).toBeNull();
    expect(
      toConversation({
        key: 'agent:main:telegram:direct:42',
        deliveryContext: { channel: 'Telegram', to: '42', threadId: 7 },
        lastTo: 'older',
        origin: { accountId: 'bot2' },
        label: 'Ann',
        updatedAt: 9,
      }),
    ).toEqual({
      sessionKey: 'agent:main:telegram:direct:42',
      channel: 'telegram',
      to: '42',
      accountId: 'bot2',
      threadId: 7,
      label: 'Ann',
      updatedAt: 9,
    });
  });
});

describe('the bridge against a scripted gateway', () => {
  function setup(answers: Record<string, (params: any) => unknown>) {
    let clock = 1_000;
    const calls: string[] = [];
    const lost: number[] = [];
    const link: GatewayLink = {
      request: async <T>(method: string, params?: unknown) => {
        calls.push(method);
        const answer = answers[method];
        if (!answer) throw new Error(`unexpected ${method}`);
        return answer(params) as T;
      },
    };
    const bridge = new ChannelBridge({
      claudeChannelMode: 'off',
      verbose: false,
      log: () => {},
      notify: async () => {},
      onLost: () => lost.push(clock),
      now: () => clock,
    });
    return { bridge, link, calls, lost, tick: (ms: number) => (clock += ms) };
  }

  const row = {
    key: 'agent:main:memory:direct:1',
    sessionId: 's1',
    chatType: 'direct',
    lastChannel: 'memory',
    lastTo: '1',
  };
  const message = (seq: number, role: string, text: string, timestamp: number) => ({
    role,
    content: [{ type: 'text', text }],
    timestamp,
    __openclaw: { seq },
  });

  it('queues only what a turn wrote after the bridge connected, once, in order, and starts over on a new transcript', async () => {
    let history = [message(1, 'user', 'old question', 500), message(2, 'assistant', 'old answer', 600)];
    let session = row;
    const { bridge, link } = setup({
      'sessions.subscribe': () => ({ subscribed: true }),
      'sessions.describe': () => ({ session }),
      'chat.history': () => ({ messages: history }),
    });
    await bridge.attach(link);
    history = [...history, message(3, 'user', 'new question', 2_000), message(4, 'assistant', 'new answer', 2_100)];
    bridge.onGatewayEvent({ event: 'sessions.changed', payload: { sessionKey: row.key } });
    bridge.onGatewayEvent({ event: 'sessions.changed', payload: { sessionKey: row.key } });
    const texts = () => bridge.poll({ afterCursor: 0 }, 100).events.map((event) => `${event.role}:${event.text}`);
    await waitFor(() => texts().length === 2, { what: 'two queued messages' });
    session = { ...row, sessionId: 's2' };
    history = [message(1, 'user', 'after reset', 3_000)];
    bridge.onGatewayEvent({ event: 'sessions.changed', payload: { sessionKey: row.key } });
    await waitFor(() => texts().length === 3, { what: 'the message after the reset' });
    expect(texts()).toEqual(['user:new question', 'assistant:new answer', 'user:after reset']);
    expect(bridge.poll({ afterCursor: 0 }, 1).events[0]).toMatchObject({
      sessionKey: row.key,
      messageId: '3',
      messageSeq: 3,
      conversation: { channel: 'memory', to: '1' },
    });
  });

  it('a closed socket (or a shutdown event) is reported once; a method failing is not', async () => {
    let socket = 'open';
    const { bridge, link, lost, tick, calls } = setup({
      'sessions.subscribe': () => ({ subscribed: true }),
      'sessions.describe': () => ({ session: row }),
      send: () => {
        throw new Error('sending to memory:1 failed: service busy');
      },
      health: () => {
        if (socket === 'closed') throw new Error('connection closed (1006)');
        return { ok: true };
      },
    });
    await bridge.attach(link);
    await expect(bridge.sendMessage(row.key, 'hi')).rejects.toThrow('service busy');
    // Heard from recently: no probe.
    await bridge.checkAlive(45_000);
    expect(calls).not.toContain('health');
    tick(45_000);
    await bridge.checkAlive(45_000);
    expect(lost).toEqual([]);
    socket = 'closed';
    tick(45_000);
    await bridge.checkAlive(45_000);
    expect(lost).toHaveLength(1);
    await expect(bridge.listConversations({})).rejects.toThrow('not connected to the gateway (reconnecting)');

    await bridge.attach(link);
    bridge.onGatewayEvent({ event: 'exec.approval.requested', payload: { id: 'a1', createdAtMs: 1 } });
    expect(bridge.listApprovals()).toEqual([{ kind: 'exec', id: 'a1', createdAtMs: 1 }]);
    bridge.onGatewayEvent({ event: 'shutdown', payload: { reason: 'restart' } });
    expect(lost).toHaveLength(2);
    expect(bridge.listApprovals()).toEqual([]);
  });
});
