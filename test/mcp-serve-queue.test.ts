/** The `claw mcp serve` event queue: cursors, the bounded window and its `gap`, long polls. */
import { describe, expect, it } from 'vitest';
import { EventQueue } from '../plugins/mcp/serve/queue.js';
import { toConversation } from '../plugins/mcp/serve/conversations.js';

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
