/**
 * Crash figure: `claw gateway` (the built CLI, a real process) is killed with SIGKILL while
 * concurrent `agent` requests run and queue over several sessions, again and again; a last
 * start finishes what was left. Counted from the transcripts on disk: every message whose
 * `agent` request was acknowledged (the "accepted" response) must appear once and be
 * answered once. The model is a fake OpenAI endpoint on 127.0.0.1 that answers each
 * message with "ANSWER <message>" a few characters at a time.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayClient } from '../../apps/cli/gateway-client.js';
import { generateDeviceIdentity } from '../../sdk/device-auth.js';
import { startFakeLlm, type FakeLlm } from '../fakes/llm-server.js';
import { spawnCliGateway, type CliGateway } from '../cli-gateway.js';
import { RESTART_NOTE_PREFIX } from '../../plugins/agent/intake.js';

const TOKEN = 'crash-bench-token-0123456789abcdef';

export interface CrashOptions {
  cli: string;
  cycles: number;
  sessions: number;
  perSession: number;
  /** SIGKILL this long after the requests went out (or after minAckedPerCycle acks): [min, max] ms, spread over the cycles. */
  killAfterMs?: [number, number];
  /**
   * Count the kill delay from when this many of the cycle's messages are acknowledged (at
   * most 30 s after they went out) instead: on a loaded machine, where the gateway starts
   * and acknowledges slowly, the kill still lands among accepted, queued and running turns.
   */
  minAckedPerCycle?: number;
  /**
   * After every other kill, the dead gateway's pid is recycled by a live node process (this
   * one): the lock files naming it name this process instead, as happens where pid_max is
   * small and many processes and threads come and go.
   */
  recyclePids?: boolean;
}

export interface CrashReport {
  cycles: number;
  sent: number;
  acknowledged: number;
  /** Acknowledged, yet missing from the transcripts or unanswered after the last start. */
  lost: number;
  /** A message or its answer in a transcript more than once. */
  duplicated: number;
  /** Acknowledged messages answered. */
  answered: number;
  /** Turns a restart interrupted and noted in the transcript. */
  interruptedNoted: number;
  seconds: number;
}

function startGateway(cli: string, stateDir: string): Promise<CliGateway> {
  return spawnCliGateway(cli, { OPENCLAW_STATE_DIR: stateDir });
}

/** With CLAW_CRASH_KEEP=1 the state dir is kept, with each gateway's stdout and stderr beside it, for a post-mortem. */
function keepOutput(stateDir: string, name: string, gateway: CliGateway): void {
  if (!process.env.CLAW_CRASH_KEEP) return;
  writeFileSync(join(stateDir, `${name}.stdout`), gateway.stdout());
  writeFileSync(join(stateDir, `${name}.stderr`), gateway.stderr());
}

/** The lock files under `dir` that name `deadPid` now name this (live, node) process, keeping the rest of what they say. */
function recyclePid(dir: string, deadPid: number): void {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.lock')) continue;
    const file = join(entry.parentPath, entry.name);
    try {
      const holder = JSON.parse(readFileSync(file, 'utf8')) as { pid?: number };
      if (holder.pid === deadPid) writeFileSync(file, `${JSON.stringify({ ...holder, pid: process.pid })}\n`);
    } catch {
      // Not a lock file's JSON.
    }
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : ''))
    .join('');
}

/** The message to answer: the last user message, or the one a restart note quotes. */
function messageToAnswer(messages: Array<{ role: string; content: unknown }>): string {
  const last = [...messages].reverse().find((message) => message.role === 'user');
  const text = last ? textOf(last.content) : '';
  return text.startsWith(RESTART_NOTE_PREFIX)
    ? text.slice(text.lastIndexOf('\nThe message:\n') + '\nThe message:\n'.length)
    : text;
}

/** Answers "ANSWER <message>", 4 characters every `delayMs`. */
export function answerEcho(fake: FakeLlm, delayMs = 25): void {
  fake.respond((request) => ({
    text: `ANSWER ${messageToAnswer(request.body.messages ?? [])}`,
    delayMs,
    chunkSize: 4,
  }));
}

export function writeConfig(stateDir: string, fake: FakeLlm, extra: Record<string, unknown> = {}): void {
  const config = {
    agents: { defaults: { model: 'openai/gpt-4.1' } },
    models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-crash' } } },
    ...extra,
    gateway: { auth: { mode: 'token', token: TOKEN }, ...(extra.gateway as object | undefined) },
  };
  writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify(config, null, 2), { mode: 0o600 });
}

/** What the transcripts of an agent hold: how often each user text and each answer appears, and recovery notes. */
export function readTranscripts(
  stateDir: string,
  agentId = 'main',
): { users: Map<string, number>; answers: Map<string, number>; recoveries: number } {
  const users = new Map<string, number>();
  const answers = new Map<string, number>();
  let recoveries = 0;
  const dir = join(stateDir, 'agents', agentId, 'sessions');
  if (!existsSync(dir)) return { users, answers, recoveries };
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.jsonl')) continue;
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      let entry: { type?: string; message?: { role: string; content: unknown } };
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (entry.type === 'recovery') recoveries++;
      if (entry.type !== 'message' || !entry.message) continue;
      const text = textOf(entry.message.content);
      const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
      if (entry.message.role === 'user' && !text.startsWith(RESTART_NOTE_PREFIX)) bump(users, text);
      if (entry.message.role === 'assistant' && text.startsWith('ANSWER ')) bump(answers, text.slice('ANSWER '.length));
    }
  }
  return { users, answers, recoveries };
}

async function connect(port: number): Promise<GatewayClient> {
  const client = new GatewayClient({
    url: `ws://127.0.0.1:${port}`,
    token: TOKEN,
    identity: generateDeviceIdentity(),
    scopes: ['operator.read', 'operator.write', 'operator.admin'],
    requestTimeoutMs: 60_000,
  });
  await client.connect();
  return client;
}

/** Connect as an operator allowed to run the agent. */
export { connect as connectOperator };

export async function crashBench(options: CrashOptions): Promise<CrashReport> {
  const started = performance.now();
  const fake = await startFakeLlm();
  answerEcho(fake);
  const stateDir = mkdtempSync(join(tmpdir(), 'claw-crash-'));
  // Queued turns run back to back, and no queue cap drops a message: what is counted is durability.
  writeConfig(stateDir, fake, { messages: { queue: { debounceMs: 0, cap: 10_000 } } });
  const [minKill, maxKill] = options.killAfterMs ?? [150, 700];
  const acknowledged = new Set<string>();
  let sent = 0;
  try {
    for (let cycle = 0; cycle < options.cycles; cycle++) {
      const gateway = await startGateway(options.cli, stateDir);
      const client = await connect(gateway.port);
      let ackedThisCycle = 0;
      const sentAt = Date.now();
      for (let s = 0; s < options.sessions; s++) {
        for (let m = 0; m < options.perSession; m++) {
          const message = `c${cycle}-s${s}-m${m}`;
          sent++;
          client
            .request(
              'agent',
              { message, sessionKey: `agent:main:crash-${s}`, queueMode: 'followup', idempotencyKey: message },
              { expectFinal: true, onAck: () => (acknowledged.add(message), ackedThisCycle++) },
            )
            .catch(() => {});
        }
      }
      const killAfter = minKill + ((maxKill - minKill) * cycle) / Math.max(1, options.cycles - 1);
      while (ackedThisCycle < (options.minAckedPerCycle ?? 0) && Date.now() - sentAt < 30_000)
        await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setTimeout(resolve, killAfter));
      gateway.child.kill('SIGKILL');
      await gateway.exited;
      if (options.recyclePids && cycle % 2 === 1) recyclePid(stateDir, gateway.child.pid!);
      keepOutput(stateDir, `cycle-${cycle}`, gateway);
      await client.close().catch(() => {});
    }
    // The last start resumes what the kills left; wait until every acknowledged message is answered.
    const gateway = await startGateway(options.cli, stateDir);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const { answers } = readTranscripts(stateDir);
      if ([...acknowledged].every((message) => answers.has(message))) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Anything resumed twice would show up now.
    await new Promise((resolve) => setTimeout(resolve, 500));
    gateway.child.kill('SIGTERM');
    await gateway.exited;
    keepOutput(stateDir, 'final', gateway);
    const { users, answers, recoveries } = readTranscripts(stateDir);
    let lost = 0;
    let duplicated = 0;
    let answered = 0;
    for (const message of acknowledged) {
      if (!users.has(message) || !answers.has(message)) lost++;
      if (answers.has(message)) answered++;
    }
    for (const count of [...users.values(), ...answers.values()]) if (count > 1) duplicated++;
    const report = {
      cycles: options.cycles,
      sent,
      acknowledged: acknowledged.size,
      lost,
      duplicated,
      answered,
      interruptedNoted: recoveries,
      seconds: (performance.now() - started) / 1000,
    };
    if (process.env.CLAW_CRASH_KEEP)
      writeFileSync(join(stateDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
    return report;
  } finally {
    await fake.close();
    if (process.env.CLAW_CRASH_KEEP) console.error(`crash bench: state dir kept at ${stateDir}`);
    else rmSync(stateDir, { recursive: true, force: true });
  }
}
