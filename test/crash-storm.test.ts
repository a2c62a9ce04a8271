/**
 * Nothing lost, nothing answered twice (issue 27), over real `claw gateway` processes, a
 * fake model and the fake Telegram Bot API on 127.0.0.1:
 *
 *  - crash storms: 20 SIGKILLs at random points while WS `agent`/`chat.send` requests (10
 *    sessions, retried by key after each restart) and Telegram DMs arrive, with the default
 *    `session.dmScope` ("main": every DM shares one session) and with "per-peer";
 *  - many chats on the shared main session with no fault at all;
 *  - a retry's answer says what happened (finished, in progress, never accepted);
 *  - a reply that fails to send (429, 429, 502) is delivered after a restart;
 *  - a message given up after repeated interruptions is answered with an error naming it,
 *    and a batch given up is answered one message at a time.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayRequestError } from '../apps/cli/gateway-client.js';
import { intakeFile, IntakeJournal } from '../plugins/agent/journal.js';
import { MAX_RESUME_ATTEMPTS } from '../plugins/agent/intake.js';
import { DELIVERY_RETRY_DELAYS_MS } from '../plugins/agent/outbox.js';
import { connectOperator, writeConfig } from './bench/crash.js';
import { answerIds, sharedSessionBench, stormBench, telegramAnswers, transcriptCounts } from './bench/storm.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { FakeTelegramApi } from './fakes/telegram-api.js';
import { CLI, startCliGateway, tempDir } from './helpers.js';

describe('a crash storm: 20 kills while WS requests and Telegram DMs arrive', () => {
  for (const dmScope of ['main', 'per-peer'] as const) {
    it(`every acknowledged message is in its transcript and answered exactly once; every retry answer is true (dmScope ${dmScope})`, async () => {
      const report = await stormBench({
        cli: CLI,
        cycles: 20,
        wsPerCycle: 30,
        sessions: 10,
        chats: 6,
        dmsPerChat: 1,
        dmScope,
        modelMs: 300,
        cycleMs: [1800, 3200],
        seed: dmScope === 'main' ? 27 : 72,
      });
      expect(report.acknowledged).toBeGreaterThan(600);
      expect({
        lost: report.lostIds,
        twice: report.twiceIds,
        misrouted: report.misrouted,
        falseRetryAnswers: report.falseRetryAnswers,
      }).toEqual({ lost: [], twice: [], misrouted: 0, falseRetryAnswers: 0 });
      expect(report.answeredOnce).toBe(report.acknowledged);
    }, 240_000);
  }
});

describe('many chats on the shared main session, no fault', () => {
  it('6 chats × 2 DMs, 0.3 s apart: 12 answers, each once, each in its own chat, no batch holding a message twice', async () => {
    const result = await sharedSessionBench({ cli: CLI, chats: 6, perChat: 2, gapMs: 300, modelMs: 800 });
    expect(result).toEqual({
      sent: 12,
      answeredOnce: 12,
      twice: 0,
      unanswered: 0,
      misrouted: 0,
      duplicateInBatch: 0,
      droppedNotices: 0,
    });
  }, 90_000);
});

describe('after a restart', () => {
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

  const CHAT = 5101;
  function state(extra: Record<string, unknown> = {}, streaming = 'off') {
    const stateDir = tempDir('claw-storm-unit-');
    writeConfig(stateDir, fake, {
      channels: {
        telegram: {
          botToken: api.token,
          apiRoot: api.apiRoot,
          dmPolicy: 'allowlist',
          allowFrom: [String(CHAT)],
          streaming,
        },
      },
      ...extra,
    });
    return stateDir;
  }
  const untilFile = async (file: string, pattern: RegExp) => {
    const deadline = Date.now() + 20_000;
    while (!(existsSync(file) && pattern.test(readFileSync(file, 'utf8'))) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect(readFileSync(file, 'utf8')).toMatch(pattern);
  };
  const idempotency = (stateDir: string) => join(stateDir, 'gateway', 'idempotency.jsonl');
  const params = (message: string, key: string) => ({ message, sessionKey: 'agent:main:retry', idempotencyKey: key });

  it('a retried key is told the truth: the first outcome, in progress and then the result, or never accepted', async () => {
    const stateDir = state();
    answerIds(fake, 50);
    // Key 1 finished before the kill (journal: finished), key 2 was journaled and not run, key 3 never reached the journal.
    const { paramsFingerprint } = await import('../plugins/gateway/dedupe.js');
    const fp = (message: string, sessionKey = 'agent:main:retry') => paramsFingerprint({ message, sessionKey });
    mkdirSync(join(stateDir, 'gateway'), { recursive: true, mode: 0o700 });
    const expires = Date.now() + 300_000;
    const lines = [
      { k: 'agent\u0000key-1', p: fp('W0s0m0 done'), e: expires, a: [{ runId: 'run-1', status: 'accepted' }] },
      { k: 'agent\u0000key-2', p: fp('W0s0m1 pending'), e: expires },
      { k: 'agent\u0000key-3', p: fp('W0s0m2 lost'), e: expires },
      // In a session of its own: resumed at the start, it must not be collected with the retries above.
      { k: 'chat.send\u0000key-4', p: fp('W0s0m3 chat', 'agent:main:chat'), e: expires },
    ];
    writeFileSync(idempotency(stateDir), lines.map((line) => `${JSON.stringify(line)}\n`).join(''), { mode: 0o600 });
    const journal = new IntakeJournal(intakeFile(stateDir, 'main'));
    journal.load();
    const input = (message: string, sessionKey = 'agent:main:retry') => ({
      agentId: 'main',
      sessionKey,
      message,
      authorized: true,
    });
    await journal.accept('run-1', input('W0s0m0 done'), Date.now(), undefined, 'agent:key-1');
    journal.done(['run-1'], 'ok');
    await journal.accept('run-2', input('W0s0m1 pending'), Date.now(), undefined, 'agent:key-2');
    await journal.accept('run-4', input('W0s0m3 chat', 'agent:main:chat'), Date.now(), undefined, 'chat.send:key-4');
    await journal.close();

    const gateway = await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
    const client = await connectOperator(gateway.port);
    try {
      expect(await client.request('agent', params('W0s0m0 done', 'key-1'), { expectFinal: true })).toMatchObject({
        runId: 'run-1',
        status: 'ok',
        recovered: true,
      });
      const acks: unknown[] = [];
      expect(
        await client.request('agent', params('W0s0m1 pending', 'key-2'), {
          expectFinal: true,
          onAck: (ack) => acks.push(ack),
        }),
      ).toMatchObject({ runId: 'run-2', status: 'ok', summary: 'ANSWER W0s0m1' });
      expect(acks).toEqual([{ runId: 'run-2', status: 'accepted', acceptedAt: expect.any(Number), recovered: true }]);
      const never = await client
        .request('agent', params('W0s0m2 lost', 'key-3'), { expectFinal: true })
        .catch((error: GatewayRequestError) => error);
      expect(never).toMatchObject({
        code: 'UNAVAILABLE',
        retryable: true,
        message: expect.stringMatching(/never|safe to send again/),
      });
      // Sent again with the same key, it runs, once.
      expect(await client.request('agent', params('W0s0m2 lost', 'key-3'), { expectFinal: true })).toMatchObject({
        status: 'ok',
        summary: 'ANSWER W0s0m2',
      });
      // chat.send's answer is its acceptance: it was accepted, and it is answered once.
      expect(
        await client.request('chat.send', {
          message: 'W0s0m3 chat',
          sessionKey: 'agent:main:chat',
          idempotencyKey: 'key-4',
        }),
      ).toMatchObject({ runId: 'run-4', recovered: true });
      const deadline = Date.now() + 10_000;
      while (!transcriptCounts(stateDir).answers.has('W0s0m3') && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const { users, answers } = transcriptCounts(stateDir);
      expect([users.get('W0s0m0'), users.get('W0s0m1'), users.get('W0s0m2'), users.get('W0s0m3')]).toEqual([
        undefined,
        1,
        1,
        1,
      ]);
      expect([answers.get('W0s0m1'), answers.get('W0s0m2'), answers.get('W0s0m3')]).toEqual([1, 1, 1]);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('a reply refused 429, 429, 502 waits in the journal and is delivered once after a kill -9 and a restart', async () => {
    const stateDir = state();
    answerIds(fake, 20);
    const first = await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
    api.script(
      'sendMessage',
      { error_code: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } },
      { times: 2 },
    );
    api.script('sendMessage', { error_code: 502, description: 'Bad Gateway' });
    await api.pushUpdate({ message: api.message({ chatId: CHAT, from: { id: CHAT }, text: 'T0c0m0 hello' }) });
    await untilFile(intakeFile(stateDir, 'main'), /"t":"undelivered"/);
    expect(api.callsTo('sendMessage').map((call) => call.status)).toEqual([429, 429, 502]);
    // The channel's status says a reply waits, and why.
    const client = await connectOperator(first.port);
    const status = await client.request<{ channelAccounts: Record<string, Array<Record<string, unknown>>> }>(
      'channels.status',
      {},
    );
    expect(status.channelAccounts.telegram?.[0]).toMatchObject({
      undeliveredReplies: 1,
      lastDeliveryError: expect.stringContaining('Bad Gateway'),
    });
    await client.close();
    first.child.kill('SIGKILL');
    await first.exited;

    await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
    await api.waitFor(
      (call) => call.method === 'sendMessage' && call.status === 200,
      20_000,
      'the reply delivered after the restart',
    );
    expect(telegramAnswers(api, [CHAT]).answers.get('T0c0m0')).toBe(1);
    expect(fake.requests).toHaveLength(1);
    await untilFile(join(stateDir, 'logs', 'gateway.log'), /delivered on round 2/);
    expect(new IntakeJournal(intakeFile(stateDir, 'main')).load().open).toEqual([]);
  }, 60_000);

  it('a reply that fails its last delivery round is given up: said in the transcript and on the channel status', async () => {
    const stateDir = state();
    const sessions = join(stateDir, 'agents', 'main', 'sessions');
    mkdirSync(sessions, { recursive: true, mode: 0o700 });
    const transcript = join(sessions, 'sess-3.jsonl');
    writeFileSync(
      transcript,
      `${JSON.stringify({ type: 'session', version: 1, id: 'sess-3', sessionKey: 'agent:main:main', timestamp: new Date().toISOString() })}\n`,
      { mode: 0o600 },
    );
    writeFileSync(
      join(sessions, 'sessions.json'),
      JSON.stringify({ 'agent:main:main': { sessionId: 'sess-3', updatedAt: Date.now() } }),
      { mode: 0o600 },
    );
    // A reply that failed every round but the last, which is due now.
    const input = {
      agentId: 'main',
      sessionKey: 'agent:main:main',
      message: 'T4c0m0 hello',
      channel: 'telegram',
      accountId: 'default',
      deliver: { channel: 'telegram', to: String(CHAT), accountId: 'default' },
    };
    const journal = new IntakeJournal(intakeFile(stateDir, 'main'));
    journal.load();
    await journal.accept('m', input, 1);
    await journal.undelivered('m', ['m'], {
      reply: { text: 'ANSWER T4c0m0', media: [] },
      attempt: DELIVERY_RETRY_DELAYS_MS.length,
      next: Date.now(),
      error: '502 Bad Gateway',
    });
    await journal.close();
    api.script('sendMessage', { error_code: 400, description: 'Bad Request: chat not found' });

    const gateway = await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
    await untilFile(transcript, /"type":"delivery","status":"failed"/);
    expect(readFileSync(transcript, 'utf8')).toMatch(/"runId":"m".*"attempts":7,"error":"[^"]*chat not found/);
    const client = await connectOperator(gateway.port);
    const status = await client.request<{ channelAccounts: Record<string, Array<Record<string, unknown>>> }>(
      'channels.status',
      {},
    );
    expect(status.channelAccounts.telegram?.[0]).toMatchObject({
      failedDeliveries: 1,
      lastDeliveryError: expect.stringContaining('chat not found'),
    });
    await client.close();
    await untilFile(intakeFile(stateDir, 'main'), /"t":"done","ids":\["m"\],"status":"undelivered"/);
  }, 60_000);

  it('a reply preview a kill left half written is taken over by the reply after the restart, not answered beside it', async () => {
    const stateDir = state({}, 'partial');
    // Slow enough that the preview page goes up (after 1 s) long before the answer is done.
    answerIds(fake, 4000);
    const first = await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
    await api.pushUpdate({ message: api.message({ chatId: CHAT, from: { id: CHAT }, text: 'T3c0m0 hello' }) });
    const preview = await api.waitFor(
      (call) => call.method === 'sendMessage' && call.status === 200,
      20_000,
      'the preview page',
    );
    const ledger = join(stateDir, 'channels', 'telegram', 'previews-default.json');
    await untilFile(ledger, new RegExp(`"id":${preview.result.message_id}`));
    first.child.kill('SIGKILL');
    await first.exited;

    answerIds(fake, 20);
    await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
    await api.waitFor(
      (call) =>
        call.method === 'editMessageText' &&
        call.status === 200 &&
        call.params.message_id === preview.result.message_id &&
        /ANSWER T3c0m0/.test(String(call.params.text)),
      20_000,
      'the preview finished into the answer',
    );
    expect(api.textOf(CHAT, preview.result.message_id)).toBe('ANSWER T3c0m0');
    expect(telegramAnswers(api, [CHAT]).answers.get('T3c0m0')).toBe(1);
    await untilFile(ledger, /"pages":\[\]/);
  }, 60_000);

  it(`a message interrupted ${MAX_RESUME_ATTEMPTS} times is answered with an error naming it; a batch is answered one message at a time`, async () => {
    const stateDir = state();
    answerIds(fake, 20);
    // What three kills mid-turn leave: each message charged three resumes, its turn begun in the transcript.
    const sessions = join(stateDir, 'agents', 'main', 'sessions');
    mkdirSync(sessions, { recursive: true, mode: 0o700 });
    const transcript = join(sessions, 'sess-1.jsonl');
    const line = (runId: string, content: string) =>
      JSON.stringify({
        type: 'message',
        runId,
        message: { role: 'user', content, timestamp: 1 },
        id: runId.slice(0, 8),
        parentId: null,
        timestamp: new Date().toISOString(),
      });
    writeFileSync(
      transcript,
      `${JSON.stringify({ type: 'session', version: 1, id: 'sess-1', sessionKey: 'agent:main:main', timestamp: new Date().toISOString() })}\n${line('lone', 'T1c0m0 alone')}\n${line('pair', '[Queued messages while agent was busy]\n\n---\nQueued #1\nT1c0m1 first\n\n---\nQueued #2\nT1c0m2 second')}\n`,
      { mode: 0o600 },
    );
    writeFileSync(
      join(sessions, 'sessions.json'),
      JSON.stringify({ 'agent:main:main': { sessionId: 'sess-1', updatedAt: Date.now() } }),
      { mode: 0o600 },
    );
    const journal = new IntakeJournal(intakeFile(stateDir, 'main'));
    journal.load();
    const input = (message: string) => ({
      agentId: 'main',
      sessionKey: 'agent:main:main',
      message,
      channel: 'telegram',
      accountId: 'default',
      deliver: { channel: 'telegram', to: String(CHAT), accountId: 'default' },
    });
    await journal.accept('lone', input('T1c0m0 alone'), 1);
    await journal.accept('m1', input('T1c0m1 first'), 2);
    await journal.accept('pair', input('T1c0m2 second'), 3);
    journal.turn('lone', ['lone'], transcript, 0);
    journal.turn('pair', ['m1', 'pair'], transcript, 0);
    for (let attempt = 0; attempt < MAX_RESUME_ATTEMPTS; attempt++) await journal.resuming(['lone', 'm1', 'pair']);
    await journal.close();

    await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
    const deadline = Date.now() + 20_000;
    const answers = () => telegramAnswers(api, [CHAT]);
    while ((answers().answers.size < 2 || !answers().errors.has('T1c0m0')) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const { answers: answered, errors } = answers();
    expect(Object.fromEntries(answered)).toEqual({ T1c0m1: 1, T1c0m2: 1 });
    expect(Object.fromEntries(errors)).toEqual({ T1c0m0: 1 });
    const notice = api
      .sent()
      .map((call) => api.textOf(CHAT, call.result.message_id) ?? '')
      .find((text) => text.includes('T1c0m0'))!;
    expect(notice).toMatch(/could not finish your message "T1c0m0 alone".*restarted 3 times/);
    // Two model calls, one per handed-back message; none for the one given up.
    expect(fake.requests).toHaveLength(2);
    expect(readFileSync(transcript, 'utf8')).toContain('"action":"abandoned"');
    expect(transcriptCounts(stateDir).errors.get('T1c0m0')).toBe(1);
    await untilFile(intakeFile(stateDir, 'main'), /^[^{]*$|"t":"done"/);
  }, 60_000);

  it('a turn continued after a restart and cut off again before it wrote anything is continued again, never sent as new', async () => {
    const stateDir = state();
    answerIds(fake, 20);
    const sessions = join(stateDir, 'agents', 'main', 'sessions');
    mkdirSync(sessions, { recursive: true, mode: 0o700 });
    const transcript = join(sessions, 'sess-2.jsonl');
    const header = JSON.stringify({
      type: 'session',
      version: 1,
      id: 'sess-2',
      sessionKey: 'agent:main:again',
      timestamp: new Date().toISOString(),
    });
    const user = JSON.stringify({
      type: 'message',
      runId: 'm',
      message: { role: 'user', content: 'W9s0m0 please', timestamp: 1 },
      id: 'u1',
      parentId: null,
      timestamp: new Date().toISOString(),
    });
    writeFileSync(transcript, `${header}\n${user}\n`, { mode: 0o600 });
    writeFileSync(
      join(sessions, 'sessions.json'),
      JSON.stringify({ 'agent:main:again': { sessionId: 'sess-2', updatedAt: Date.now() } }),
      { mode: 0o600 },
    );
    // What two kills leave: the turn began (its user line is there), a restart charged it and began it again further on, then died.
    const input = { agentId: 'main', sessionKey: 'agent:main:again', message: 'W9s0m0 please' };
    const records = [
      { t: 'accepted', id: 'm', at: 1, input },
      { t: 'turn', id: 'm', ids: ['m'], file: transcript, offset: 0 },
      { t: 'resume', id: 'm', attempt: 1 },
      { t: 'turn', id: 'm', ids: ['m'], file: transcript, offset: readFileSync(transcript).length },
    ];
    mkdirSync(join(stateDir, 'agents', 'main'), { recursive: true });
    writeFileSync(intakeFile(stateDir, 'main'), records.map((record) => `${JSON.stringify(record)}\n`).join(''), {
      mode: 0o600,
    });

    await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
    const deadline = Date.now() + 20_000;
    while (!transcriptCounts(stateDir).answers.has('W9s0m0') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const counts = transcriptCounts(stateDir);
    expect([counts.users.get('W9s0m0'), counts.answers.get('W9s0m0')]).toEqual([1, 1]);
    expect(readFileSync(transcript, 'utf8')).toContain(
      '[System] The gateway restarted while you were working on a message',
    );
  }, 60_000);

  it('a message dropped from a full queue ("old") is told so in its chat, not left waiting', async () => {
    const stateDir = state({ messages: { queue: { mode: 'followup', cap: 1, drop: 'old', debounceMs: 0 } } });
    answerIds(fake, 300);
    await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
    for (const id of ['T2c0m0', 'T2c0m1', 'T2c0m2'])
      await api.pushUpdate({ message: api.message({ chatId: CHAT, from: { id: CHAT }, text: `${id} hi` }) });
    await api.waitFor(
      (call) =>
        call.method === 'sendMessage' &&
        /T2c0m2/.test(String(call.params.text)) &&
        /^ANSWER/.test(String(call.params.text)),
      20_000,
      'the last message answered',
    );
    const texts = api.sent().map((call) => String(call.params.text));
    expect(texts.filter((text) => text.startsWith('ANSWER'))).toEqual(['ANSWER T2c0m0', 'ANSWER T2c0m2']);
    expect(texts.find((text) => text.includes('T2c0m1'))).toMatch(
      /Too many messages were waiting, so this one was dropped/,
    );
  }, 60_000);

  it('a run that fails tells its chat, rather than leaving it waiting', async () => {
    const stateDir = state();
    fake.script({ error: { status: 400, message: 'this model does not exist' } });
    await startCliGateway({ OPENCLAW_STATE_DIR: stateDir });
    await api.pushUpdate({ message: api.message({ chatId: CHAT, from: { id: CHAT }, text: 'are you there?' }) });
    const call = await api.waitFor(
      (candidate) => candidate.method === 'sendMessage' && candidate.status === 200,
      20_000,
      'the error notice',
    );
    expect(String(call.params.text)).toMatch(/^⚠️ I couldn't answer that: .*does not exist/);
  }, 60_000);
});
