/**
 * Durable intake (issue 11, part 1): a message is on disk before it is acknowledged, a
 * restart resumes what was accepted and not finished (once), Telegram confirms an update
 * only once it is durable, and a stopping gateway drains running turns up to
 * `gateway.agentDrainMs`. The process tests run the built `claw gateway` against a fake
 * model and a fake Telegram Bot API on 127.0.0.1, and kill it for real.
 */
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { intakeFile, IntakeJournal } from '../plugins/agent/journal.js';
import { FollowupQueue, type Pending } from '../plugins/agent/queue.js';
import { DELIVERY_RETRY_DELAYS_MS, nextAttemptAt, Outbox, type OutboxEntry } from '../plugins/agent/outbox.js';
import { GatewayRequestError } from '../apps/cli/gateway-client.js';
import { MAX_RESUME_ATTEMPTS } from '../plugins/agent/intake.js';
import { answerEcho, connectOperator, crashBench, readTranscripts, writeConfig } from './bench/crash.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { FakeTelegramApi } from './fakes/telegram-api.js';
import { CLI, startCliGateway, tempDir, waitFor } from './helpers.js';

const input = (message: string) => ({ agentId: 'main', sessionKey: 'agent:main:main', message });

describe('the intake journal', () => {
  it('keeps accepted messages until done, owner-only, across a reload', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'claw-intake-')), 'agents', 'main', 'intake.jsonl');
    const journal = new IntakeJournal(file);
    journal.load();
    const now = Date.now();
    await journal.accept('r1', input('one'), now, 'telegram:default:k:1:7');
    await journal.accept('r2', input('two'), now + 1);
    journal.turn('r1', ['r1'], '/t/s.jsonl', 42);
    journal.done(['r2'], 'ok');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, '..')).mode & 0o777).toBe(0o700);
    const reread = new IntakeJournal(file).load();
    expect(reread.open).toEqual([
      { id: 'r1', at: now, input: input('one'), key: 'telegram:default:k:1:7', attempts: 0, turn: 'r1' },
    ]);
    expect(reread.turns.get('r1')).toEqual({ id: 'r1', ids: ['r1'], file: '/t/s.jsonl', offset: 42 });
    expect([...reread.seen.keys()]).toEqual(['telegram:default:k:1:7']);
    await journal.close();
  });

  it('skips a torn last line, and the rewrite on load drops it', async () => {
    const file = join(tempDir('claw-intake-'), 'intake.jsonl');
    const journal = new IntakeJournal(file);
    journal.load();
    await journal.accept('whole', input('kept'), 1);
    await journal.close();
    appendFileSync(file, '{"t":"accepted","id":"torn","at":2,"inp');
    const second = new IntakeJournal(file);
    const read = second.load();
    expect(read.open.map((message) => message.id)).toEqual(['whole']);
    expect(read.skippedLines).toBe(1);
    await second.accept('next', input('after'), 3);
    // Records, then the preallocated NUL padding.
    const text = readFileSync(file, 'utf8');
    expect(
      text
        .slice(0, text.indexOf('\0'))
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line).id),
    ).toEqual(['whole', 'next']);
    await second.close();
  });

  it('a batch turn names each message; each is charged its own resumes and finished on its own', async () => {
    const file = join(tempDir('claw-intake-'), 'intake.jsonl');
    const journal = new IntakeJournal(file);
    journal.load();
    await journal.accept('a', input('first'), 1);
    await journal.accept('b', input('second'), 2);
    await journal.accept('c', input('steered'), 3);
    journal.turn('b', ['a', 'b'], '/t/s.jsonl', 10);
    journal.join('b', ['c']);
    await journal.resuming(['a', 'b', 'c']);
    await journal.resuming(['a']);
    await journal.close();
    // A reload rewrites the file; the journal that did it writes on.
    const reopened = new IntakeJournal(file);
    let read = reopened.load();
    expect(read.open.map(({ id, turn, attempts, input }) => ({ id, turn, attempts, message: input.message }))).toEqual([
      { id: 'a', turn: 'b', attempts: 2, message: 'first' },
      { id: 'b', turn: 'b', attempts: 1, message: 'second' },
      { id: 'c', turn: 'b', attempts: 1, message: 'steered' },
    ]);
    expect(read.turns.get('b')?.ids).toEqual(['a', 'b', 'c']);
    // Handed back one at a time: "a" continues alone, in a turn of its own.
    reopened.turn('a', ['a'], '/t/s.jsonl', 99);
    reopened.done(['b', 'c'], 'ok');
    await reopened.close();
    read = new IntakeJournal(file).load();
    expect(read.open.map(({ id, turn }) => ({ id, turn }))).toEqual([{ id: 'a', turn: 'a' }]);
    expect([...read.turns.keys()]).toEqual(['a']);
  });

  it('keeps an undelivered reply with its next round, and remembers a finished request by its key', async () => {
    const file = join(tempDir('claw-intake-'), 'intake.jsonl');
    const journal = new IntakeJournal(file);
    journal.load();
    await journal.accept('m', input('hello'), 1, undefined, 'agent:key-1');
    await journal.accept('n', input('other'), 2, undefined, 'chat.send:key-2');
    journal.turn('m', ['m'], '/t/s.jsonl', 0);
    await journal.undelivered('m', ['m'], {
      reply: { text: 'hi there', media: [] },
      attempt: 1,
      next: 5000,
      error: '502 Bad Gateway',
    });
    journal.done(['n'], 'ok');
    await journal.close();
    const reread = new IntakeJournal(file);
    const read = reread.load();
    expect(read.open).toMatchObject([
      {
        id: 'm',
        requestKey: 'agent:key-1',
        undelivered: { turn: 'm', reply: { text: 'hi there' }, attempt: 1, next: 5000, error: '502 Bad Gateway' },
      },
    ]);
    expect(reread.request('agent:key-1')).toMatchObject({ open: { id: 'm' } });
    expect(reread.request('chat.send:key-2')).toMatchObject({ finished: { id: 'n', status: 'ok' } });
    expect(reread.request('agent:never')).toBeUndefined();
    await reread.close();
  });

  it('lives at agents/<id>/intake.jsonl under the state dir', () => {
    expect(intakeFile('/state', 'work')).toBe(join('/state', 'agents', 'work', 'intake.jsonl'));
  });
});

describe("a session's follow-up queue, shared by many chats", () => {
  const pending = (id: string, to: string, resumed = false): Pending => ({
    id,
    input: {
      agentId: 'main',
      sessionKey: 'agent:main:main',
      message: `${id} text`,
      channel: 'telegram',
      deliver: { channel: 'telegram', to },
    },
    acceptedAt: 0,
    settle: { resolve: () => {}, reject: () => {} },
    ...(resumed ? { resumed } : {}),
  });

  it("collects one chat's messages per turn, and holds each message once", () => {
    const queue = new FollowupQueue({ mode: 'collect', debounceMs: 0, cap: 20, drop: 'summarize' });
    for (const item of [
      pending('a1', 'A'),
      pending('b1', 'B'),
      pending('a2', 'A'),
      pending('a1', 'A'),
      pending('b2', 'B'),
    ])
      queue.add(item);
    expect(queue.size).toBe(4);
    expect(queue.next('collect')?.members.map((item) => item.id)).toEqual(['a1', 'a2']);
    expect(queue.next('collect')?.members.map((item) => item.id)).toEqual(['b1', 'b2']);
    expect(queue.next('collect')).toBeUndefined();
  });

  it("drops only at the cap; a summary goes to its own chat's next turn; resumed messages are not dropped", () => {
    const queue = new FollowupQueue({ mode: 'collect', debounceMs: 0, cap: 3, drop: 'summarize' });
    for (const item of [pending('a1', 'A'), pending('b1', 'B'), pending('b2', 'B')])
      expect(queue.add(item)).toEqual({});
    expect(queue.summarized).toEqual([]);
    queue.add(pending('b3', 'B'));
    expect(queue.summarized.map((item) => item.id)).toEqual(['a1']);
    queue.add(pending('r1', 'B', true));
    expect(queue.size).toBe(4);
    // B's turn does not carry A's summary: it waits for a turn in A's chat.
    expect(queue.next('collect')).toMatchObject({
      members: [{ id: 'b1' }, { id: 'b2' }, { id: 'b3' }, { id: 'r1' }],
      summarized: [],
    });
    expect(queue.next('collect')).toMatchObject({ members: [], summarized: [{ id: 'a1' }] });
  });

  it('"new" refuses the newcomer and "old" drops the oldest, saying which', () => {
    const refusing = new FollowupQueue({ mode: 'followup', debounceMs: 0, cap: 1, drop: 'new' });
    refusing.add(pending('a1', 'A'));
    expect(refusing.add(pending('a2', 'A')).refused?.id).toBe('a2');
    const dropping = new FollowupQueue({ mode: 'followup', debounceMs: 0, cap: 1, drop: 'old' });
    dropping.add(pending('a1', 'A'));
    expect(dropping.add(pending('a2', 'A')).dropped?.id).toBe('a1');
    expect(dropping.next('followup')?.members.map((item) => item.id)).toEqual(['a2']);
  });
});

describe('the outbox: replies that failed to send', () => {
  const entry = (): OutboxEntry => ({
    agentId: 'main',
    turn: 'run-1',
    ids: ['run-1'],
    input: {
      agentId: 'main',
      sessionKey: 'agent:main:main',
      message: 'hi',
      channel: 'telegram',
      deliver: { channel: 'telegram', to: '42', accountId: 'default' },
    },
    reply: { text: 'hello', media: [] },
    attempt: 0,
    next: 0,
  });

  it('waits 5 s, 30 s, 2 min, 10 min, 30 min and 1 h (or a longer retry_after), then gives up', () => {
    expect(DELIVERY_RETRY_DELAYS_MS.map((_, index) => nextAttemptAt(0, index + 1))).toEqual([
      5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000,
    ]);
    expect(nextAttemptAt(0, 1, 60_000)).toBe(60_000);
    expect(nextAttemptAt(0, DELIVERY_RETRY_DELAYS_MS.length + 1)).toBeUndefined();
  });

  it('keeps each new state before it waits, delivers on a later round, and shows what waits on the channel status', async () => {
    vi.useFakeTimers();
    try {
      const persisted: number[] = [];
      const events: string[] = [];
      let failures = 2;
      const outbox = new Outbox({
        logger: { info() {}, warn() {}, error() {}, debug() {} } as never,
        now: () => Date.now(),
        send: async () => (failures-- > 0 ? { status: 'failed', error: '502 Bad Gateway' } : { status: 'delivered' }),
        persist: async (state) => void persisted.push(state.attempt),
        delivered: (state) => void events.push(`delivered after ${state.attempt} failed round(s)`),
        givenUp: () => void events.push('given up'),
      });
      await outbox.failed(entry(), '429 Too Many Requests', 1_000);
      expect(persisted).toEqual([1]);
      expect(outbox.status()).toMatchObject([
        { channel: 'telegram', accountId: 'default', pending: 1, failed: 0, lastError: '429 Too Many Requests' },
      ]);
      await vi.advanceTimersByTimeAsync(5_000);
      expect(persisted).toEqual([1, 2]);
      await vi.advanceTimersByTimeAsync(30_000);
      expect(persisted).toEqual([1, 2, 3]);
      await vi.advanceTimersByTimeAsync(120_000);
      expect(events).toEqual(['delivered after 3 failed round(s)']);
      expect(outbox.status()).toMatchObject([{ pending: 0, failed: 0 }]);
      outbox.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives a reply up after the last round, and says so', async () => {
    vi.useFakeTimers();
    try {
      const events: string[] = [];
      const outbox = new Outbox({
        logger: { info() {}, warn() {}, error() {}, debug() {} } as never,
        now: () => Date.now(),
        send: async () => ({ status: 'failed', error: 'chat not found' }),
        persist: async () => {},
        delivered: () => void events.push('delivered'),
        givenUp: (state) => void events.push(`given up after ${state.attempt} rounds: ${state.error}`),
      });
      await outbox.failed(entry(), 'chat not found');
      await vi.advanceTimersByTimeAsync(DELIVERY_RETRY_DELAYS_MS.reduce((total, delay) => total + delay, 0));
      expect(events).toEqual([`given up after ${DELIVERY_RETRY_DELAYS_MS.length + 1} rounds: chat not found`]);
      expect(outbox.status()).toMatchObject([{ pending: 0, failed: 1, lastError: 'chat not found' }]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('kill -9 during concurrent runs', () => {
  it('every acknowledged message is in its transcript and answered once after restart', async () => {
    // As many kills as a run may be interrupted and still resumed: one interrupted by every
    // kill is given up on by design (a loaded machine, slow turns). Each kill comes once at
    // least 14 of the cycle's 35 messages are acknowledged, and every other one leaves
    // locks whose pid a live node process has taken over (pid reuse).
    const report = await crashBench({
      cli: CLI,
      cycles: MAX_RESUME_ATTEMPTS,
      sessions: 5,
      perSession: 7,
      killAfterMs: [200, 900],
      minAckedPerCycle: 14,
      recyclePids: true,
    });
    expect(report.acknowledged).toBeGreaterThan(40);
    expect(report).toMatchObject({ lost: 0, duplicated: 0, answered: report.acknowledged });
  }, 90_000);
});

describe('a stopping gateway and Telegram', () => {
  let fake: FakeLlm;
  const api = new FakeTelegramApi();
  beforeAll(async () => {
    fake = await startFakeLlm();
    await api.start();
  });
  afterAll(async () => {
    await fake.close();
    await api.stop();
  });
  afterEach(() => {
    fake.reset();
    api.reset();
  });

  function gatewayState(gateway: Record<string, unknown> = {}) {
    const stateDir = tempDir('claw-intake-gw-');
    writeConfig(stateDir, fake, {
      channels: { telegram: { botToken: api.token, apiRoot: api.apiRoot, dmPolicy: 'allowlist', allowFrom: ['1001'] } },
      gateway,
    });
    return { stateDir, env: { OPENCLAW_STATE_DIR: stateDir } };
  }

  const dm = (text: string) => ({ message: api.message({ chatId: 1001, from: { id: 1001 }, text }) });
  /** What the chat shows: each message the bot sent as it reads now (a streamed reply is edited into its preview message). */
  const answersTo = (chatId: number) =>
    api
      .sent()
      .filter((call) => call.method === 'sendMessage' && String(call.params.chat_id) === String(chatId))
      .map((call) => api.textOf(chatId, call.result.message_id))
      .filter((text) => text !== undefined);
  /**
   * What the journal still holds open, read from a copy: load() rewrites the file it reads, and
   * the journal belongs to the running gateway (a rewrite here could drop a line it appends).
   */
  const openRuns = (stateDir: string) => {
    const copy = join(tempDir('claw-intake-copy-'), 'intake.jsonl');
    try {
      copyFileSync(intakeFile(stateDir, 'main'), copy);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return new IntakeJournal(copy).load().open;
  };

  it('SIGTERM lets the reply being written go out, and confirms the update only once it is durable', async () => {
    const { stateDir, env } = gatewayState();
    fake.respond(() => ({ text: 'ANSWER drained', delayMs: 120, chunkSize: 2 }));
    const gw = await startCliGateway(env);
    const updateId = await api.pushUpdate(dm('please answer before you stop'));
    // The model is answering (slowly) when the stop signal comes.
    await waitFor(() => fake.requests.length > 0, { what: 'the model request' });
    expect(fake.requests).toHaveLength(1);
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(answersTo(1001)).toEqual(['ANSWER drained']);
    // Confirmed to Telegram (a getUpdates past it), so it is not delivered again.
    expect(api.callsTo('getUpdates').some((call) => Number(call.params.offset) > updateId)).toBe(true);
    // The log file, not stdout: the last lines can still be in the pipe when the process exits.
    const log = readFileSync(join(stateDir, 'logs', 'gateway.log'), 'utf8');
    expect(log).toContain('waiting up to 300 s for 1 running turn(s) to finish');
    expect(openRuns(stateDir)).toEqual([]);
  }, 30_000);

  it('stops a turn that outlasts gateway.agentDrainMs, keeps it, and answers in the same chat after the restart', async () => {
    const { stateDir, env } = gatewayState({ agentDrainMs: 500 });
    fake.script({ hang: true });
    answerEcho(fake, 5);
    const first = await startCliGateway(env);
    const updateId = await api.pushUpdate(dm('a long question'));
    await waitFor(() => fake.requests.length > 0, { what: 'the model request' });
    const stopping = Date.now();
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    // 500 ms of drain, then the stopped turn settles and the process exits (well before the model would).
    expect(Date.now() - stopping).toBeLessThan(4000);
    expect(answersTo(1001)).toEqual([]);
    expect(openRuns(stateDir).map((message) => message.input.message)).toEqual(['a long question']);

    await startCliGateway(env);
    await api.waitFor(
      (call) => call.method === 'sendMessage' && String(call.params.chat_id) === '1001',
      10_000,
      'the resumed answer',
    );
    expect(answersTo(1001)).toEqual(['ANSWER a long question']);
    const { users, recoveries } = readTranscripts(stateDir);
    expect(users.get('a long question')).toBe(1);
    expect(recoveries).toBe(1);
    // Nothing runs twice: no second answer, no redelivered update. Once the recovered run is
    // closed in the journal and a poll has confirmed the update, neither can come any more.
    await waitFor(() => openRuns(stateDir).length === 0, { what: 'the recovered run to close', intervalMs: 100 });
    await api.waitFor(
      (call) => call.method === 'getUpdates' && Number(call.params.offset) > updateId,
      10_000,
      'a poll past the update',
    );
    expect(answersTo(1001)).toHaveLength(1);
    expect(openRuns(stateDir)).toEqual([]);
  }, 30_000);

  it('a message that arrives while the gateway drains is refused, not lost: Telegram delivers it again after the restart', async () => {
    const { stateDir, env } = gatewayState({ agentDrainMs: 2000 });
    fake.respond(() => ({ text: 'ANSWER slow', delayMs: 100, chunkSize: 1 }));
    const first = await startCliGateway(env);
    await api.pushUpdate(dm('slow one'));
    await waitFor(() => fake.requests.length > 0, { what: 'the model request' });
    first.child.kill('SIGTERM');
    await waitFor(() => /waiting up to .* running turn/.test(gatewayLog(stateDir)), {
      what: 'the gateway to start draining',
    });
    // Telegram still polls while turns drain; the pipeline refuses the update and it is not confirmed.
    let handed = false;
    const late = api.pushUpdate(dm('late message')).then(() => (handed = true));
    expect(await first.exited).toBe(0);
    // The stopping gateway got it and refused it (it is answered only after the restart).
    expect(handed).toBe(true);
    expect(answersTo(1001)).toEqual(['ANSWER slow']);
    answerEcho(fake, 5);
    await startCliGateway(env);
    await late;
    await api.waitFor(
      (call) => call.method === 'sendMessage' && call.params.text === 'ANSWER late message',
      10_000,
      'the late message answered',
    );
    expect(answersTo(1001).filter((text) => text === 'ANSWER late message')).toHaveLength(1);
    expect(readTranscripts(stateDir).users.get('late message')).toBe(1);
  }, 30_000);
});

/** The gateway's log file (not stdout: the last lines can still be in the pipe); empty until it exists. */
function gatewayLog(stateDir: string): string {
  try {
    return readFileSync(join(stateDir, 'logs', 'gateway.log'), 'utf8');
  } catch {
    return '';
  }
}

describe('an agent request while the gateway drains', () => {
  it('is refused with UNAVAILABLE (retryable), while the running turn finishes and is answered', async () => {
    const fake = await startFakeLlm();
    try {
      const stateDir = tempDir('claw-intake-drain-');
      writeConfig(stateDir, fake, { gateway: { agentDrainMs: 5000 } });
      fake.respond(() => ({ text: 'ANSWER finishing', delayMs: 100, chunkSize: 2 }));
      const gw = await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
      const client = await connectOperator(gw.port);
      const running = client.request('agent', { message: 'finish me', idempotencyKey: 'k1' }, { expectFinal: true });
      await waitFor(() => fake.requests.length > 0, { what: 'the model request' });
      gw.child.kill('SIGTERM');
      await waitFor(() => /waiting up to .* running turn/.test(gatewayLog(stateDir)), {
        what: 'the gateway to start draining',
      });
      const refused = await client
        .request('agent', { message: 'too late', idempotencyKey: 'k2' }, { expectFinal: true })
        .catch((error: GatewayRequestError) => error);
      expect(refused).toBeInstanceOf(GatewayRequestError);
      expect(refused).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
      expect(await running).toMatchObject({ status: 'ok', summary: 'ANSWER finishing' });
      expect(await gw.exited).toBe(0);
      expect(readTranscripts(stateDir).users.has('too late')).toBe(false);
      expect(new IntakeJournal(intakeFile(stateDir, 'main')).load().open).toEqual([]);
      await client.close();
    } finally {
      await fake.close();
    }
  }, 30_000);

  it('config.apply restarts the gateway only after the running turn is answered', async () => {
    const fake = await startFakeLlm();
    try {
      const stateDir = tempDir('claw-intake-restart-');
      writeConfig(stateDir, fake);
      fake.respond(() => ({ text: 'ANSWER before the restart', delayMs: 100, chunkSize: 2 }));
      const gw = await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
      const client = await connectOperator(gw.port);
      const running = client.request('agent', { message: 'finish first', idempotencyKey: 'r1' }, { expectFinal: true });
      await waitFor(() => fake.requests.length > 0, { what: 'the model request' });
      const current = await client.request<{ hash: string }>('config.get', {});
      const config = {
        ...JSON.parse(readFileSync(join(stateDir, 'openclaw.json'), 'utf8')),
        session: { idleMinutes: 30 },
      };
      expect(
        await client.request('config.apply', { config, baseHash: current.hash, idempotencyKey: 'apply-1' }),
      ).toMatchObject({ restart: { scheduled: true } });
      expect(await running).toMatchObject({ status: 'ok', summary: 'ANSWER before the restart' });
      const log = () => gatewayLog(stateDir);
      await waitFor(() => log().split('gateway listening').length >= 3, {
        what: 'the restarted gateway to listen',
        timeoutMs: 15_000,
      });
      expect(log()).toMatch(
        /restarting \(config\.apply\)[\s\S]*waiting up to 300 s for 1 running turn\(s\) to finish[\s\S]*gateway listening/,
      );
      const { users, answers } = readTranscripts(stateDir);
      expect([users.get('finish first'), answers.get('before the restart')]).toEqual([1, 1]);
      await client.close().catch(() => {});
    } finally {
      await fake.close();
    }
  }, 30_000);
});
