/**
 * The intake journal's contract: where the agent plugin keeps every message it accepted
 * (`<stateDir>/agents/<agentId>/intake.jsonl`), so the gateway can tell at start whether a
 * previous process left work to resume, and the error every way in raises while the
 * gateway stops. The journal itself (records, recovery) belongs to the agent plugin.
 */
import { closeSync, existsSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

export const INTAKE_FILE = 'intake.jsonl';

/** Raised instead of accepting a message while the gateway is shutting down or restarting. */
export class IntakeClosedError extends Error {
  constructor(reason = 'the gateway is shutting down') {
    super(`${reason}: the message was not accepted; send it again once the gateway is back`);
    this.name = 'IntakeClosedError';
  }
}

export function intakeFile(stateDir: string, agentId: string): string {
  return join(stateDir, 'agents', agentId, INTAKE_FILE);
}

/** Whether any agent's journal may hold unfinished messages or recent dedupe keys (it has a first record): cheap, no parsing. */
export function hasPendingIntake(stateDir: string): boolean {
  const root = join(stateDir, 'agents');
  if (!existsSync(root)) return false;
  const first = Buffer.alloc(1);
  for (const agentId of readdirSync(root)) {
    let fd: number;
    try {
      fd = openSync(join(root, agentId, INTAKE_FILE), 'r');
    } catch {
      continue; // No journal for this agent.
    }
    try {
      if (readSync(fd, first, 0, 1, 0) === 1 && first[0] !== 0) return true;
    } finally {
      closeSync(fd);
    }
  }
  return false;
}

/** Agent ids that have a journal. */
export function journaledAgents(stateDir: string): string[] {
  const root = join(stateDir, 'agents');
  if (!existsSync(root)) return [];
  return readdirSync(root).filter((agentId) => existsSync(join(root, agentId, INTAKE_FILE)));
}
