/**
 * `claw config set/unset` while a gateway runs: the change goes through the gateway
 * (`config.patch`), which merges it into the file under the config lock, validates it and
 * applies it (hot, or by restarting, per `gateway.reload.mode`) — so the answer says
 * whether the change is live. With no gateway, or one that cannot be reached, the file is
 * edited here under the same lock; a running gateway then picks the change up from disk.
 */
import { randomUUID } from 'node:crypto';
import { readConfigFile, resolveConfigPath, resolveStateDir } from '../../kernel/index.js';
import { GatewayClient, GatewayRequestError } from '../../sdk/client.js';
import type { ReloadResult } from '../../sdk/config-reload.js';
import { diffMergePatch } from '../../sdk/config-write.js';
import { operatorClientOptions, runningGateway } from '../../sdk/operator.js';
import { clawVersion } from '../../sdk/version.js';
import { editConfig } from './config-edit.js';
import { CliError, warn, type Io } from './io.js';

export interface ConfigChange {
  /** Where the change was made. */
  via: 'gateway' | 'file';
  changed: boolean;
  /** The running gateway's account of it (when it went through the gateway). */
  reload?: ReloadResult;
}

/** Every other writer can win the race at most once per retry: enough for 20 writers at once. */
const MAX_CONFLICT_RETRIES = 20;

export async function changeConfig(io: Io, purpose: string, edit: (raw: Record<string, unknown>) => void): Promise<ConfigChange> {
  const stateDir = resolveStateDir(io.env);
  if (runningGateway(stateDir)) {
    const file = readConfigFile(resolveConfigPath(io.env), io.env);
    const client = new GatewayClient(
      operatorClientOptions({ stateDir, env: io.env, gateway: file.resolved.gateway as never, client: { id: 'claw-cli', version: clawVersion(), mode: 'cli' } }),
    );
    let connected = false;
    try {
      await client.connect();
      connected = true;
    } catch (error) {
      warn(io, `the running gateway could not be reached (${(error as Error).message}); editing the config file directly — the gateway picks the change up from disk`);
    }
    if (connected) {
      try {
        return await throughGateway(client, edit);
      } finally {
        await client.close();
      }
    }
  }
  let changed = true;
  await editConfig(
    io,
    (raw) => {
      const before = JSON.stringify(raw);
      edit(raw);
      changed = JSON.stringify(raw) !== before;
    },
    { purpose, dryRun: false },
  );
  return { via: 'file', changed };
}

async function throughGateway(client: GatewayClient, edit: (raw: Record<string, unknown>) => void): Promise<ConfigChange> {
  for (let attempt = 0; ; attempt++) {
    const current = await request<{ hash: string; config: Record<string, unknown> }>(client, 'config.get', {});
    const next = structuredClone(current.config);
    edit(next);
    let patch: Record<string, unknown>;
    try {
      patch = diffMergePatch(current.config, next);
    } catch (error) {
      throw new CliError((error as Error).message);
    }
    if (Object.keys(patch).length === 0) return { via: 'gateway', changed: false };
    try {
      // Based on the revision just read: if another writer got in first, read again and redo the edit.
      const result = await client.request<{ reload: ReloadResult }>('config.patch', { patch, baseHash: current.hash, idempotencyKey: randomUUID() });
      return { via: 'gateway', changed: true, reload: result.reload };
    } catch (error) {
      const conflict = error instanceof GatewayRequestError && (error.details as { code?: string } | undefined)?.code === 'CONFIG_CONFLICT';
      if (!conflict || attempt >= MAX_CONFLICT_RETRIES) throw refused('config.patch', error);
    }
  }
}

async function request<T>(client: GatewayClient, method: string, params: Record<string, unknown>): Promise<T> {
  try {
    return await client.request<T>(method, params);
  } catch (error) {
    throw refused(method, error);
  }
}

function refused(method: string, error: unknown): unknown {
  return error instanceof GatewayRequestError ? new CliError(`the gateway refused ${method}: ${error.message}`) : error;
}
