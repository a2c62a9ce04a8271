/**
 * The crash storm: real `claw gateway` processes killed with SIGKILL again and again while
 * WebSocket clients (`agent` and `chat.send`, many sessions) and Telegram DMs (the fake Bot
 * API on 127.0.0.1) keep arriving, at random points of each cycle. Clients behave as users'
 * clients do: after a restart they send every request that got no final answer again, with
 * the same idempotencyKey, and note what the gateway says about it.
 *
 * Every message carries an id (`W3s2m1`, `T4c1m0`); the fake model answers with
 * "ANSWER <every id in the message it answers>", so one answer may answer a collected batch.
 * Counted at the end, from the transcripts on disk and the messages Telegram received:
 *
 *   acknowledged   WS: the accept response arrived; Telegram: the update was confirmed (a
 *                  getUpdates with a higher offset), so Telegram will not deliver it again
 *   lost           acknowledged, yet not in a transcript or never answered
 *   twice          a message or its answer in the transcripts (or in the chat) more than once
 *   false retries  a retry answer that did not match what happened (told "not run" for a
 *                  message that ran, told "in progress" for one that never ran)
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayClient, GatewayRequestError } from '../../apps/cli/gateway-client.js';
import { generateDeviceIdentity } from '../../sdk/device-auth.js';
import { spawnCliGateway, type CliGateway } from '../cli-gateway.js';
import { FakeTelegramApi, type TelegramCall } from '../fakes/telegram-api.js';
import JSON5 from 'json5';
import { startFakeLlm, type FakeLlm } from '../fakes/llm-server.js';
import { rng } from './rng.js';

const TOKEN = 'storm-bench-token-0123456789abcdef';
const ID = /\b[WT]\d+[sc]\d+m\d+\b/g;
const RESTART_NOTE = '[System] The gateway restarted';
/** A send Telegram answered this close before a kill was in flight when the process died. */

export interface StormOptions {
  cli: string;
  cycles: number;
  /** WS messages per cycle, spread over the sessions, half `agent`, half `chat.send`. */
  wsPerCycle: number;
  sessions: number;
  /** Telegram private chats, and DMs per chat per cycle. */
  chats: number;
  dmsPerChat: number;
  /** `session.dmScope` (default "main": every DM shares the main session). */
  dmScope?: 'main' | 'per-peer';
  /** How long the fake model takes for one answer. */
  modelMs: number;
  /** A cycle lasts this long (random in the range) from the gateway listening to the kill. */
  cycleMs: [number, number];
  seed?: number;
  /** Keep the state dir and each gateway's output (CLAW_STORM_KEEP=1 does the same). */
  keep?: boolean;
}

export interface StormReport {
  cycles: number;
  sent: number;
  acknowledged: number;
  answeredOnce: number;
  /** Acknowledged messages answered more than once, or whose user message is in the transcripts more than once. */
  twice: number;
  /**
   * Telegram answers sent a second time because the kill landed after Telegram answered the
   * first send but before the gateway could record it (the intake journal, read right after
   * that kill, did not have the message done): no Bot API call can tell whether a message
   * arrived, so that window can be made small (the journal records the reply the moment the
   * send returns) but not closed. A copy sent again although the journal had it done counts
   * in `twice`. Counted here, not in `twice`.
   */
  resentInFlight: number;
  /** For each Telegram answer sent more than once: ms from Telegram answering the earlier copy to the next kill (the window's width under this load). */
  resentGapsMs: number[];
  lost: number;
  /** Answered with an error instead of an answer (given up after repeated interruptions). */
  errored: number;
  retries: number;
  falseRetryAnswers: number;
  /** Telegram answers sent to a chat other than the sender's. */
  misrouted: number;
  misroutedIds: string[];
  seconds: number;
  stateDir?: string;
  lostIds: string[];
  twiceIds: string[];
}

type Kind = 'agent' | 'chat.send';

interface WsMessage {
  id: string;
  kind: Kind;
  sessionKey: string;
  key: string;
  acked: boolean;
  final: boolean;
  /** What retries were told: "ok" (a final result), "accepted" (in progress), or an error code and message. */
  retryAnswers: string[];
  /** A retry was told to use a new key, and the client did (so the message may run twice). */
  resentWithNewKey?: boolean;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : ''))
    .join('');
}

function idsIn(text: string): string[] {
  return [...new Set(text.match(ID) ?? [])];
}

/** The fake model: "ANSWER <ids of the last user message>", spread over `modelMs`. */
export function answerIds(fake: FakeLlm, modelMs: number): void {
  fake.respond((request) => {
    const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
    const last = [...messages].reverse().find((message) => message.role === 'user');
    const ids = last ? idsIn(textOf(last.content)) : [];
    const text = `ANSWER ${ids.length ? ids.join(' ') : 'none'}`;
    const chunks = 8;
    return { text, chunkSize: Math.max(1, Math.ceil(text.length / chunks)), delayMs: Math.round(modelMs / chunks) };
  });
}

/** Per id: user messages holding it and assistant answers holding it, over every transcript of the agent. */
export function transcriptCounts(
  stateDir: string,
  agentId = 'main',
): { users: Map<string, number>; answers: Map<string, number>; errors: Map<string, number> } {
  const users = new Map<string, number>();
  const answers = new Map<string, number>();
  const errors = new Map<string, number>();
  const dir = join(stateDir, 'agents', agentId, 'sessions');
  if (!existsSync(dir)) return { users, answers, errors };
  const bump = (map: Map<string, number>, id: string) => map.set(id, (map.get(id) ?? 0) + 1);
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.jsonl')) continue;
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      let entry: { type?: string; message?: { role: string; content: unknown } };
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (entry?.type !== 'message' || !entry.message) continue;
      const text = textOf(entry.message.content);
      if (entry.message.role === 'user' && !text.startsWith(RESTART_NOTE))
        for (const id of idsIn(text)) bump(users, id);
      if (entry.message.role === 'assistant' && text.startsWith('ANSWER '))
        for (const id of idsIn(text)) bump(answers, id);
      if (entry.message.role === 'assistant' && !text.startsWith('ANSWER '))
        for (const id of idsIn(text)) bump(errors, id);
    }
  }
  return { users, answers, errors };
}

function keepOutput(stateDir: string, name: string, gateway: CliGateway, keep: boolean): void {
  if (!keep) return;
  writeFileSync(join(stateDir, `${name}.stdout`), gateway.stdout());
  writeFileSync(join(stateDir, `${name}.stderr`), gateway.stderr());
}

/** The fake model and Bot API, and a state dir whose config allows `chats` private chats (ids from `firstUser`). */
async function setUp(prefix: string, chats: number, firstUser: number, modelMs: number, dmScope?: 'main' | 'per-peer') {
  const fake = await startFakeLlm();
  answerIds(fake, modelMs);
  const api = new FakeTelegramApi();
  await api.start();
  const stateDir = mkdtempSync(join(tmpdir(), prefix));
  const users = Array.from({ length: chats }, (_, index) => firstUser + index);
  const config = {
    agents: { defaults: { model: 'openai/gpt-4.1' } },
    models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-storm' } } },
    gateway: { auth: { mode: 'token', token: TOKEN } },
    channels: {
      telegram: { botToken: api.token, apiRoot: api.apiRoot, dmPolicy: 'allowlist', allowFrom: users.map(String) },
    },
    ...(dmScope ? { session: { dmScope } } : {}),
  };
  writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config, null, 2), { mode: 0o600 });
  return { fake, api, stateDir, users };
}

export async function stormBench(options: StormOptions): Promise<StormReport> {
  const started = performance.now();
  const keep = options.keep ?? Boolean(process.env.CLAW_STORM_KEEP);
  const random = rng(options.seed ?? 27);
  const { fake, api, stateDir, users } = await setUp(
    'claw-storm-',
    options.chats,
    5001,
    options.modelMs,
    options.dmScope,
  );

  const ws = new Map<string, WsMessage>();
  /** Telegram message id → the update that carried it and its chat. */
  const dms = new Map<string, { updateId: number; chat: number }>();
  let retries = 0;

  /**
   * A request's answer: a final result ends it; a retryable error leaves it for the next
   * start (same key); an error that says to use a new key is obeyed, as a user's client would.
   */
  const settle = (message: WsMessage, retry: boolean, error?: unknown) => {
    if (error === undefined) {
      message.final = true;
      if (retry) message.retryAnswers.push('ok');
      return;
    }
    const failure = error instanceof GatewayRequestError ? error : undefined;
    if (retry) message.retryAnswers.push(failure ? `${failure.code}: ${failure.message}` : `error: ${String(error)}`);
    if (failure && /new idempotencyKey/i.test(failure.message)) {
      message.key = `${message.key}-again`;
      message.resentWithNewKey = true;
    } else if (failure && /safe to send again/i.test(failure.message)) {
      // Sent again at the next start, with the same key.
    } else if (failure && failure.retryable === false && failure.code !== 'UNAVAILABLE') {
      message.final = true;
    }
  };
  const send = (client: GatewayClient, message: WsMessage, retry: boolean) => {
    if (retry) retries++;
    const params = { message: `${message.id} please`, sessionKey: message.sessionKey, idempotencyKey: message.key };
    if (message.kind === 'agent') {
      return client
        .request('agent', params, {
          expectFinal: true,
          onAck: () => {
            message.acked = true;
            if (retry) message.retryAnswers.push('accepted');
          },
        })
        .then(
          () => settle(message, retry),
          (error: unknown) => settle(message, retry, error),
        );
    }
    return client.request('chat.send', params).then(
      () => {
        message.acked = true;
        settle(message, retry);
      },
      (error: unknown) => settle(message, retry, error),
    );
  };

  const connect = async (port: number) => {
    const client = new GatewayClient({
      url: `ws://127.0.0.1:${port}`,
      token: TOKEN,
      identity: generateDeviceIdentity(),
      scopes: ['operator.read', 'operator.write', 'operator.admin'],
      requestTimeoutMs: 120_000,
    });
    await client.connect();
    return client;
  };

  let sent = 0;
  const kills: number[] = [];
  /** Per kill: the test ids the intake journal had done (delivered) when that gateway died. */
  const doneAtKill: Array<Set<string>> = [];
  try {
    for (let cycle = 0; cycle < options.cycles; cycle++) {
      labelTelegramCalls(stateDir, api, cycle);
      const gateway = await spawnCliGateway(options.cli, { OPENCLAW_STATE_DIR: stateDir });
      const client = await connect(gateway.port);
      // What the last gateway left without a final answer is sent again, with its key.
      for (const message of ws.values()) if (!message.final) void send(client, message, true);
      const length = options.cycleMs[0] + random() * (options.cycleMs[1] - options.cycleMs[0]);
      const timers: NodeJS.Timeout[] = [];
      for (let i = 0; i < options.wsPerCycle; i++) {
        const session = i % options.sessions;
        const message: WsMessage = {
          id: `W${cycle}s${session}m${Math.floor(i / options.sessions)}`,
          kind: i % 2 === 0 ? 'agent' : 'chat.send',
          sessionKey: `agent:main:storm-${session}`,
          key: `storm-${cycle}-${i}`,
          acked: false,
          final: false,
          retryAnswers: [],
        };
        ws.set(message.id, message);
        timers.push(setTimeout(() => (sent++, void send(client, message, false)), random() * length * 0.8));
      }
      for (const [c, chat] of users.entries()) {
        for (let j = 0; j < options.dmsPerChat; j++) {
          const id = `T${cycle}c${c}m${j}`;
          timers.push(
            setTimeout(
              () => {
                sent++;
                const update = api.pushUpdate({
                  message: api.message({ chatId: chat, from: { id: chat }, text: `${id} hello` }),
                });
                void update.then((updateId) => dms.set(id, { updateId, chat }));
              },
              random() * length * 0.8,
            ),
          );
        }
      }
      await new Promise((resolve) => setTimeout(resolve, length));
      for (const timer of timers) clearTimeout(timer);
      kills.push(performance.now());
      gateway.child.kill('SIGKILL');
      await gateway.exited;
      // Read before the next start compacts it: what this gateway knew it had delivered.
      doneAtKill.push(journalDone(stateDir));
      keepOutput(stateDir, `cycle-${cycle}`, gateway, keep);
      await client.close().catch(() => {});
    }

    // The last start: retries once more, then everything acknowledged must get answered.
    labelTelegramCalls(stateDir, api, options.cycles);
    const gateway = await spawnCliGateway(options.cli, { OPENCLAW_STATE_DIR: stateDir });
    const client = await connect(gateway.port);
    await Promise.all(
      [...ws.values()].filter((message) => !message.final).map((message) => send(client, message, true)),
    );
    const confirmedBelow = () =>
      Math.max(0, ...api.callsTo('getUpdates').map((call) => Number(call.params.offset ?? 0)));
    const acknowledged = () => {
      const ids = [...ws.values()].filter((message) => message.acked).map((message) => message.id);
      for (const [id, dm] of dms) if (dm.updateId < confirmedBelow()) ids.push(id);
      return ids;
    };
    const deadline = Date.now() + 120_000;
    for (;;) {
      const counts = transcriptCounts(stateDir);
      const telegram = telegramAnswers(api, users);
      const pending = acknowledged().filter((id) =>
        id.startsWith('T') ? !telegram.answers.has(id) : !counts.answers.has(id) && !counts.errors.has(id),
      );
      if (pending.length === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // Anything answered twice would show now.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await client.close().catch(() => {});
    gateway.child.kill('SIGTERM');
    await gateway.exited;
    keepOutput(stateDir, 'final', gateway, keep);

    const counts = transcriptCounts(stateDir);
    const telegram = telegramAnswers(api, users);
    const acked = acknowledged();
    const lostIds: string[] = [];
    const twiceIds: string[] = [];
    let errored = 0;
    let resentInFlight = 0;
    /** For each Telegram answer sent more than once: ms from Telegram answering the first copy to the next kill. */
    const gaps: number[] = [];
    for (const id of acked) {
      const inTranscript = counts.users.get(id) ?? 0;
      let answers = id.startsWith('T')
        ? (telegram.answers.get(id) ?? 0) + (telegram.errors.get(id) ?? 0)
        : (counts.answers.get(id) ?? 0) + (counts.errors.get(id) ?? 0);
      if (id.startsWith('T') && answers > 1) {
        const inFlight = inFlightCopies(api, id, kills, doneAtKill, gaps);
        resentInFlight += inFlight;
        answers -= inFlight;
      }
      if (id.startsWith('T') ? telegram.errors.has(id) : counts.errors.has(id)) errored++;
      if (inTranscript === 0 || answers === 0) lostIds.push(id);
      if (inTranscript > 1 || answers > 1 || (id.startsWith('T') && (counts.answers.get(id) ?? 0) > 1))
        twiceIds.push(id);
    }
    // A retry answer is false when it said the request would not run and it ran, or said it runs and it never did.
    let falseRetryAnswers = 0;
    for (const message of ws.values()) {
      // The request as first sent ran (a client told to use a new key sent it a second time).
      const ran = (counts.users.get(message.id) ?? 0) >= (message.resentWithNewKey ? 2 : 1);
      for (const answer of message.retryAnswers) {
        const saysNotRun = /not run a second time|never accepted/i.test(answer);
        const saysRuns = answer === 'accepted' || answer === 'ok';
        if ((saysNotRun && ran) || (saysRuns && !ran)) falseRetryAnswers++;
      }
    }
    const report: StormReport = {
      cycles: options.cycles,
      sent,
      acknowledged: acked.length,
      answeredOnce: acked.length - lostIds.length - twiceIds.filter((id) => !lostIds.includes(id)).length,
      twice: twiceIds.length,
      resentInFlight,
      resentGapsMs: gaps,
      lost: lostIds.length,
      errored,
      retries,
      falseRetryAnswers,
      misrouted: telegram.misrouted.length,
      misroutedIds: telegram.misrouted,
      seconds: (performance.now() - started) / 1000,
      lostIds,
      twiceIds,
      ...(keep ? { stateDir } : {}),
    };
    if (keep) {
      // For a post-mortem: every Bot API call that showed a message answered twice, and when each gateway was killed.
      const calls = Object.fromEntries(
        twiceIds
          .filter((id) => id.startsWith('T'))
          .map((id) => [
            id,
            api.calls
              .filter((call) => idsIn(String(call.params.text ?? '')).includes(id))
              .map((call) => ({
                method: call.method,
                status: call.status,
                at: call.at,
                answeredAt: call.answeredAt,
                messageId: call.result?.message_id ?? call.params.message_id,
                text: call.params.text,
              })),
          ]),
      );
      const retryAnswers = [...ws.values()].filter((m) => m.retryAnswers.length).map((m) => [m.id, m.retryAnswers]);
      writeFileSync(
        join(stateDir, 'report.json'),
        `${JSON.stringify({ ...report, kills, calls, retryAnswers }, null, 2)}\n`,
      );
    }
    return report;
  } finally {
    await fake.close();
    await api.stop();
    if (!keep) rmSync(stateDir, { recursive: true, force: true, maxRetries: 5 });
    else console.error(`storm: state dir kept at ${stateDir}`);
  }
}

/**
 * Copies of the answer to `id` that went out again because the gateway that put the earlier
 * copy up (its sendMessage, or the editMessageText that finished a preview into it) died
 * before recording it: the journal as that kill left it does not have the message done, and
 * the next copy came from a later gateway. Each gateway calls the Bot API through its own
 * labelled apiRoot, so which process made a call is known, not guessed from timing. Also
 * notes, per copy, the ms from Telegram's answer to that gateway's kill (negative: Telegram
 * answered after the process was gone).
 */
function inFlightCopies(
  api: FakeTelegramApi,
  id: string,
  kills: number[],
  doneAtKill: Array<Set<string>>,
  gaps: number[],
): number {
  const shows = (call: { params: Record<string, unknown> }) => idsIn(String(call.params.text ?? '')).includes(id);
  const copies = api
    .sent()
    .filter(
      (call) =>
        call.method === 'sendMessage' &&
        idsIn(api.textOf(Number(call.params.chat_id), call.result?.message_id) ?? '').includes(id),
    );
  const gatewayOf = (call: TelegramCall) => Number(call.via?.slice(1) ?? NaN);
  let inFlight = 0;
  copies.slice(0, -1).forEach((copy, index) => {
    const messageId = copy.result?.message_id;
    const calls = api.calls.filter(
      (call) =>
        call.status === 200 &&
        call.answeredAt !== undefined &&
        shows(call) &&
        (call === copy || (call.method === 'editMessageText' && call.params.message_id === messageId)),
    );
    const last = calls.at(-1) ?? copy;
    const gateway = gatewayOf(last);
    if (!(gateway < kills.length)) return; // put up by the last gateway, which was never killed
    gaps.push(Math.round((kills[gateway]! - last.answeredAt!) * 10) / 10);
    if (!doneAtKill[gateway]!.has(id) && gatewayOf(copies[index + 1]!) > gateway) inFlight++;
  });
  return inFlight;
}

/** Points the Telegram channel of the next gateway at its own label (`/g<n>`) of the fake Bot API. */
function labelTelegramCalls(stateDir: string, api: FakeTelegramApi, gateway: number): void {
  const file = join(stateDir, 'openclaw.json');
  const config = JSON5.parse(readFileSync(file, 'utf8')) as { channels: { telegram: { apiRoot: string } } };
  config.channels.telegram.apiRoot = `${api.apiRoot}/g${gateway}`;
  writeFileSync(file, JSON.stringify(config, null, 2), { mode: 0o600 });
}

/** Test ids of the messages the agent's intake journal has done (answered and delivered, or failed). */
function journalDone(stateDir: string): Set<string> {
  const file = join(stateDir, 'agents', 'main', 'intake.jsonl');
  const done = new Set<string>();
  if (!existsSync(file)) return done;
  const text = readFileSync(file, 'utf8');
  const end = text.indexOf('\0');
  const idsOf = new Map<string, string[]>();
  const closed: string[] = [];
  for (const line of (end < 0 ? text : text.slice(0, end)).split('\n')) {
    let record: { t?: string; id?: string; ids?: string[]; input?: unknown };
    try {
      record = JSON.parse(line) as typeof record;
    } catch {
      continue; // the torn last line a kill can leave
    }
    if (record.t === 'accepted' && record.id) idsOf.set(record.id, idsIn(JSON.stringify(record.input ?? '')));
    if (record.t === 'done') closed.push(...(record.ids ?? []));
  }
  for (const message of closed) for (const id of idsOf.get(message) ?? []) done.add(id);
  return done;
}

/** Per id: how many of the bot's messages (as they read now) answer it, error notices, and answers sent to the wrong chat. */
export function telegramAnswers(
  api: FakeTelegramApi,
  chats: number[],
): { answers: Map<string, number>; errors: Map<string, number>; misrouted: string[] } {
  const answers = new Map<string, number>();
  const errors = new Map<string, number>();
  const misrouted: string[] = [];
  for (const call of api.sent()) {
    if (call.method !== 'sendMessage') continue;
    const chat = Number(call.params.chat_id);
    const text = api.textOf(chat, call.result?.message_id);
    if (text === undefined) continue;
    for (const id of idsIn(text)) {
      const owner = chats[Number(/c(\d+)m/.exec(id)?.[1] ?? -1)];
      if (owner !== chat) misrouted.push(id);
      const map = text.startsWith('ANSWER ') ? answers : errors;
      map.set(id, (map.get(id) ?? 0) + 1);
    }
  }
  return { answers, errors, misrouted };
}

/** No fault at all: `chats` Telegram chats each send `perChat` DMs `gapMs` apart; every message answered once, in its own chat. */
export async function sharedSessionBench(options: {
  cli: string;
  chats: number;
  perChat: number;
  gapMs: number;
  modelMs: number;
  dmScope?: 'main' | 'per-peer';
}): Promise<{
  sent: number;
  answeredOnce: number;
  twice: number;
  unanswered: number;
  misrouted: number;
  duplicateInBatch: number;
  droppedNotices: number;
}> {
  const { fake, api, stateDir, users } = await setUp(
    'claw-shared-',
    options.chats,
    6001,
    options.modelMs,
    options.dmScope,
  );
  const gateway = await spawnCliGateway(options.cli, { OPENCLAW_STATE_DIR: stateDir });
  try {
    const ids: string[] = [];
    for (let j = 0; j < options.perChat; j++) {
      for (const [c, chat] of users.entries()) {
        const id = `T0c${c}m${j}`;
        ids.push(id);
        void api.pushUpdate({ message: api.message({ chatId: chat, from: { id: chat }, text: `${id} hello` }) });
      }
      await new Promise((resolve) => setTimeout(resolve, options.gapMs));
    }
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && ids.some((id) => !telegramAnswers(api, users).answers.has(id)))
      await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const { answers, misrouted } = telegramAnswers(api, users);
    let duplicateInBatch = 0;
    let droppedNotices = 0;
    for (const request of fake.requests) {
      const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
      const last = [...messages].reverse().find((message) => message.role === 'user');
      const text = last ? textOf(last.content) : '';
      const all = text.match(ID) ?? [];
      duplicateInBatch += all.length - new Set(all).size;
      if (/dropped from a full queue/.test(text)) droppedNotices++;
    }
    return {
      sent: ids.length,
      answeredOnce: ids.filter((id) => answers.get(id) === 1).length,
      twice: ids.filter((id) => (answers.get(id) ?? 0) > 1).length,
      unanswered: ids.filter((id) => !answers.has(id)).length,
      misrouted: misrouted.length,
      duplicateInBatch,
      droppedNotices,
    };
  } finally {
    gateway.child.kill('SIGTERM');
    await gateway.exited;
    await fake.close();
    await api.stop();
    rmSync(stateDir, { recursive: true, force: true, maxRetries: 5 });
  }
}
