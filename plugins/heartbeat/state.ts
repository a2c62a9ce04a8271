/**
 * What the heartbeat remembers across restarts, in `<stateDir>/heartbeat/state.json`
 * (atomic, 0600): whether heartbeats are on (`set-heartbeats`), and per agent when the
 * schedule started and when a heartbeat last ran, so the next one is computed from that
 * and not pushed forward by a restart, plus the last outcome (`last-heartbeat`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../sdk/index.js';

export type HeartbeatStatus = 'sent' | 'ok-token' | 'ok-empty' | 'skipped' | 'failed';

/** One heartbeat outcome: the `heartbeat` event's payload and what `last-heartbeat` returns. */
export interface HeartbeatEvent {
  ts: number;
  agentId: string;
  status: HeartbeatStatus;
  /** Why it was skipped or failed, or what woke it (`interval`, `wake`, `cron:<id>`, …). */
  reason?: string;
  trigger: string;
  sessionKey?: string;
  runId?: string;
  channel?: string;
  to?: string;
  /** The start of what was (or would have been) delivered. */
  preview?: string;
  /** System events the turn saw. */
  systemEvents?: number;
  durationMs?: number;
}

export interface AgentHeartbeatState {
  /** When this agent's schedule began (the first start that saw it); the first run is one interval later. */
  anchorAt: number;
  /** Last scheduled slot used (a run or a recorded skip): the next is one interval later. */
  lastRunAt?: number;
  last?: HeartbeatEvent;
  /** A heartbeat turn started and not yet finished and delivered (run again after a crash). */
  inFlight?: { trigger: string; startedAt: number };
}

export interface HeartbeatStateFile {
  version: 1;
  enabled: boolean;
  agents: Record<string, AgentHeartbeatState>;
}

export class HeartbeatState {
  readonly file: string;
  private loaded?: HeartbeatStateFile;

  constructor(stateDir: string) {
    this.file = join(stateDir, 'heartbeat', 'state.json');
  }

  /** Read on first use: a turn that only needs the system events never touches this file. */
  private get data(): HeartbeatStateFile {
    this.loaded ??= this.read();
    return this.loaded;
  }

  private read(): HeartbeatStateFile {
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as HeartbeatStateFile;
      return {
        version: 1,
        enabled: parsed.enabled !== false,
        agents: parsed.agents && typeof parsed.agents === 'object' ? parsed.agents : {},
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(`${this.file} cannot be read: ${(error as Error).message}`);
      return { version: 1, enabled: true, agents: {} };
    }
  }

  get enabled(): boolean {
    return this.data.enabled;
  }

  setEnabled(enabled: boolean): void {
    this.data.enabled = enabled;
    this.save();
  }

  agentIds(): string[] {
    return Object.keys(this.data.agents);
  }

  agent(agentId: string): AgentHeartbeatState | undefined {
    return this.data.agents[agentId];
  }

  /** The agent's state, created (and saved) with `now` as its anchor the first time. */
  ensure(agentId: string, now: number): AgentHeartbeatState {
    let state = this.data.agents[agentId];
    if (!state) {
      state = { anchorAt: now };
      this.data.agents[agentId] = state;
      this.save();
    }
    return state;
  }

  update(agentId: string, now: number, patch: Partial<AgentHeartbeatState>): void {
    this.data.agents[agentId] = { ...this.ensure(agentId, now), ...patch };
    this.save();
  }

  /** The newest outcome over all agents (or one agent's). */
  last(agentId?: string): HeartbeatEvent | undefined {
    const events = Object.entries(this.data.agents)
      .filter(([id]) => agentId === undefined || id === agentId)
      .flatMap(([, state]) => (state.last ? [state.last] : []));
    return events.sort((a, b) => b.ts - a.ts)[0];
  }

  private save(): void {
    // Rewritten after every heartbeat; the rename keeps it whole even without the flush.
    writeJsonAtomic(this.file, this.data);
  }
}
