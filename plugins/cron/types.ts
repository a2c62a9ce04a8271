/**
 * The cron job model, with OpenClaw's field names (jobs.json `{version: 1, jobs}`, run-log
 * lines, `cron` events), plus claw's run journal: the `running*` fields are written before
 * a run starts, so a restart knows exactly which occurrence was cut off.
 */
import type { WakeMode } from '../../sdk/index.js';
import type { SsrfPolicy } from '../../sdk/net/index.js';

export type CronSchedule =
  | { kind: 'at'; at: string }
  | { kind: 'every'; everyMs: number; anchorMs?: number }
  | { kind: 'cron'; expr: string; tz?: string; staggerMs?: number };

export type CronPayload =
  | { kind: 'systemEvent'; text: string }
  | { kind: 'agentTurn'; message: string; model?: string; thinking?: string; timeoutSeconds?: number }
  /** A shell command run through the exec tool (policy, sandbox and approvals apply). */
  | { kind: 'command'; command: string; cwd?: string; timeoutSeconds?: number };

export type SessionTarget = 'main' | 'isolated';
export type DeliveryMode = 'announce' | 'webhook' | 'none';

export interface CronDelivery {
  mode: DeliveryMode;
  /** Channel id, or "last" (the main session's last channel). */
  channel?: string;
  /** Chat target for announce; the URL for webhook. */
  to?: string;
  accountId?: string;
  threadId?: string | number;
}

export type RunStatus = 'ok' | 'error' | 'skipped';
export type DeliveryStatus = 'delivered' | 'not-delivered' | 'unknown' | 'not-requested';

export interface CronJobState {
  nextRunAtMs?: number;
  /** Set (and written) before a run starts; cleared when it ends: the run journal. */
  runningAtMs?: number;
  runningRunId?: string;
  /** The scheduled occurrence the running run is for. */
  runningOccurrenceMs?: number;
  /** Why the running run started: schedule, manual (cron.run) or recovery. */
  runningTrigger?: RunTrigger;
  /** The running run is itself the re-run of one a restart cut off (never re-run twice). */
  runningRecovery?: boolean;
  lastRunAtMs?: number;
  lastStatus?: RunStatus;
  lastRunStatus?: RunStatus;
  lastDurationMs?: number;
  lastError?: string;
  lastDelivered?: boolean;
  lastDeliveryStatus?: DeliveryStatus;
  lastDeliveryError?: string;
  consecutiveErrors?: number;
  scheduleErrorCount?: number;
}

export interface CronJob {
  id: string;
  name: string;
  description?: string;
  agentId?: string;
  enabled: boolean;
  createdAtMs: number;
  updatedAtMs: number;
  schedule: CronSchedule;
  sessionTarget: SessionTarget;
  wakeMode: WakeMode;
  payload: CronPayload;
  delivery?: CronDelivery;
  deleteAfterRun?: boolean;
  state: CronJobState;
}

export interface CronStoreFile {
  version: 1;
  jobs: CronJob[];
}

/** Why a run happened. */
export type RunTrigger = 'schedule' | 'manual' | 'recovery';

export interface CatchUpNote {
  /** Occurrences that passed unrun, including the one this run stands for. */
  missed: number;
  policy: CatchUpPolicy;
}

export interface RunLogEntry {
  ts: number;
  jobId: string;
  action: 'finished';
  runId: string;
  status: RunStatus;
  trigger: RunTrigger;
  error?: string;
  summary?: string;
  delivered?: boolean;
  deliveryStatus?: DeliveryStatus;
  deliveryError?: string;
  sessionId?: string;
  sessionKey?: string;
  runAtMs?: number;
  /** The scheduled time this run is for (absent for manual runs). */
  scheduledAtMs?: number;
  durationMs?: number;
  nextRunAtMs?: number;
  model?: string;
  provider?: string;
  usage?: unknown;
  catchUp?: CatchUpNote;
}

export type CatchUpPolicy = 'once' | 'all' | 'skip';

/** The `cron` config section (manifest configSections.cron), defaults applied. */
export interface CronSection {
  enabled: boolean;
  store?: string;
  maxConcurrentRuns: number;
  webhookToken?: string;
  webhookSsrfPolicy?: SsrfPolicy;
  skipMissedJobs: boolean;
  catchUp: CatchUpPolicy;
  missedAfterMs: number;
  watchdogGraceMs: number;
  runLog: { maxBytes: number | string; keepLines: number };
}
