/**
 * `claw config set/unset` while a gateway runs: the change goes through the gateway
 * (`config.patch`), which merges it into the file under the config lock, validates it and
 * applies it (hot, or by restarting, per `gateway.reload.mode`) — so the answer says
 * whether the change is live. With no gateway, or one that cannot be reached, the file is
 * edited here under the same lock; a running gateway then picks the change up from disk.
 */
import { readConfigFile, resolveConfigPath, resolveStateDir } from '../../kernel/index.js';
import type { ConfigChange } from '../../sdk/cli.js';
import { GatewayClient } from './gateway-client.js';
import { ConfigChangeRefused, patchThroughGateway } from './config-patch.js';
import { operatorClientOptions, runningGateway } from './operator.js';
import { clawVersion } from '../../sdk/version.js';
import { CLI_CLIENT_ID } from '../../sdk/protocol/constants.js';
import { editConfig } from './config-edit.js';
import { CliError, warn, type Io } from './io.js';

export type { ConfigChange };

export async function changeConfig(
  io: Io,
  purpose: string,
  edit: (raw: Record<string, unknown>) => void,
): Promise<ConfigChange> {
  const stateDir = resolveStateDir(io.env);
  if (runningGateway(stateDir)) {
    const file = readConfigFile(resolveConfigPath(io.env), io.env);
    const client = new GatewayClient(
      operatorClientOptions({
        stateDir,
        env: io.env,
        gateway: file.resolved.gateway as never,
        client: { id: CLI_CLIENT_ID, version: clawVersion(), mode: 'cli' },
      }),
    );
    let connected = false;
    try {
      await client.connect();
      connected = true;
    } catch (error) {
      warn(
        io,
        `the running gateway could not be reached (${(error as Error).message}); editing the config file directly — the gateway picks the change up from disk`,
      );
    }
    if (connected) {
      try {
        return await patchThroughGateway(client, edit);
      } catch (error) {
        throw error instanceof ConfigChangeRefused ? new CliError(error.message) : error;
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
