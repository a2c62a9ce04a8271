/**
 * The sub-agent run registry: every spawned child with its requester, task and outcome, in
 * `<stateDir>/subagents/runs.json` (written atomically, owner-only) before the spawn is
 * acknowledged, so a gateway restart finds every run it accepted.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicAsync } from '../../sdk/index.js';

export type SubagentStatus = 'running' | 'ok' | 'error' | 'timeout' | 'aborted' | 'killed' | 'interrupted';

export interface RequesterOrigin {
  channel?: string;
  to?: string;
  accountId?: string;
  threadId?: string | number;
}

export interface SubagentRunRecord {
  runId: string;
  childSessionKey: string;
  childAgentId: string;
  requesterSessionKey: string;
  requesterAgentId: string;
  requesterOrigin?: RequesterOrigin;
  task: string;
  label?: string;
  cleanup: 'delete' | 'keep';
  model?: string;
  runTimeoutSeconds?: number;
  createdAt: number;
  startedAt?: number;
  endedAt?: number;
  status: SubagentStatus;
  error?: string;
  /** The child's final text (announce result). */
  result?: string;
  usage?: { input: number; output: number };
  suppressAnnounceReason?: 'killed' | 'announce-skip';
  /** The requester got its announce (or none was due). */
  announcedAt?: number;
  /** The run ended with the process (restart) and was reported as interrupted. */
  interrupted?: boolean;
}

interface RunsFile {
  version: 1;
  runs: SubagentRunRecord[];
}

export class SubagentRegistry {
  readonly file: string;
  private readonly runs = new Map<string, SubagentRunRecord>();
  private queue: Promise<void> = Promise.resolve();
  private next?: Promise<void>;

  constructor(stateDir: string) {
    this.file = join(stateDir, 'subagents', 'runs.json');
  }

  load(): void {
    if (!existsSync(this.file)) return;
    let parsed: RunsFile;
    try {
      parsed = JSON.parse(readFileSync(this.file, 'utf8')) as RunsFile;
    } catch (error) {
      throw new Error(
        `${this.file} is not valid JSON (${(error as Error).message}); move it aside to start with no sub-agent runs`,
      );
    }
    for (const run of parsed.runs ?? []) if (run && typeof run.runId === 'string') this.runs.set(run.runId, run);
  }

  /**
   * Writes are atomic and flushed (temp + fsync + rename) off the event loop, and grouped:
   * changes made while a write is going out share the next one, so fifty spawns at once
   * cost a few writes, not fifty. Resolves when the change is on disk.
   */
  save(): Promise<void> {
    if (this.next) return this.next;
    const next = this.queue.then(() => {
      this.next = undefined;
      return writeFileAtomicAsync(
        this.file,
        `${JSON.stringify({ version: 1, runs: [...this.runs.values()] } satisfies RunsFile, null, 2)}\n`,
      );
    });
    this.next = next;
    this.queue = next.catch(() => undefined);
    return next;
  }

  add(run: SubagentRunRecord): Promise<void> {
    this.runs.set(run.runId, run);
    return this.save();
  }

  async update(runId: string, patch: Partial<SubagentRunRecord>): Promise<SubagentRunRecord | undefined> {
    const run = this.runs.get(runId);
    if (!run) return undefined;
    Object.assign(run, patch);
    await this.save();
    return run;
  }

  async remove(runIds: string[]): Promise<void> {
    let changed = false;
    for (const id of runIds) changed = this.runs.delete(id) || changed;
    if (changed) await this.save();
  }

  get(runId: string): SubagentRunRecord | undefined {
    return this.runs.get(runId);
  }

  all(): SubagentRunRecord[] {
    return [...this.runs.values()];
  }

  /** Runs this session spawned, oldest first. */
  forRequester(requesterSessionKey: string): SubagentRunRecord[] {
    return this.all()
      .filter((run) => run.requesterSessionKey === requesterSessionKey)
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  activeFor(requesterSessionKey: string): SubagentRunRecord[] {
    return this.forRequester(requesterSessionKey).filter((run) => run.endedAt === undefined);
  }

  byChildKey(childSessionKey: string): SubagentRunRecord | undefined {
    return this.all().find((run) => run.childSessionKey === childSessionKey);
  }
}
