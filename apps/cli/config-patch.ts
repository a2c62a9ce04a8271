/**
 * A CLI's config change while a gateway may be running: through the gateway
 * (`config.get` + `config.patch` based on the revision read, redone when another writer got
 * in first), so the gateway validates, writes and applies it and the answer says whether
 * it is live. `claw config set` and plugin commands (`claw hooks enable`, through
 * `ctx.gateway.changeConfig`) share this. Without a gateway, a plugin command's change is
 * made in the file under the config lock (`editConfigFile`).
 */
import { randomUUID } from 'node:crypto';
import { formatIssue, formatPath, type PathSegment } from '../../kernel/index.js';
import { GatewayRequestError, type ConfigChange, type ReloadResult } from '../../sdk/cli.js';
import type { KernelServices } from '../../sdk/index.js';
import type { GatewayConnection } from '../../sdk/cli.js';

/** Every other writer can win the race at most once per retry: enough for 20 writers at once. */
const MAX_CONFLICT_RETRIES = 20;

export class ConfigChangeRefused extends Error {}

function refused(method: string, error: unknown): unknown {
  return error instanceof GatewayRequestError
    ? new ConfigChangeRefused(`the gateway refused ${method}: ${error.message}`)
    : error;
}

export async function patchThroughGateway(
  client: GatewayConnection,
  edit: (raw: Record<string, unknown>) => void,
): Promise<ConfigChange> {
  for (let attempt = 0; ; attempt++) {
    let current: { hash: string; config: Record<string, unknown> };
    try {
      current = await client.request<{ hash: string; config: Record<string, unknown> }>('config.get', {});
    } catch (error) {
      throw refused('config.get', error);
    }
    const next = structuredClone(current.config);
    edit(next);
    let patch: Record<string, unknown>;
    try {
      patch = diffMergePatch(current.config, next);
    } catch (error) {
      throw new ConfigChangeRefused((error as Error).message);
    }
    if (Object.keys(patch).length === 0) return { via: 'gateway', changed: false };
    try {
      // Based on the revision just read: if another writer got in first, read again and redo the edit.
      const result = await client.request<{ reload: ReloadResult }>('config.patch', {
        patch,
        baseHash: current.hash,
        idempotencyKey: randomUUID(),
      });
      return { via: 'gateway', changed: true, reload: result.reload };
    } catch (error) {
      const conflict =
        error instanceof GatewayRequestError &&
        (error.details as { code?: string } | undefined)?.code === 'CONFIG_CONFLICT';
      if (!conflict || attempt >= MAX_CONFLICT_RETRIES) throw refused('config.patch', error);
    }
  }
}

/** The file edited in place under the config lock, refused when the edit adds a config error. */
export async function editConfigFile(
  kernel: Pick<KernelServices, 'configFile' | 'paths'>,
  purpose: string,
  edit: (raw: Record<string, unknown>) => void,
): Promise<ConfigChange> {
  return kernel.configFile.locked(purpose, async (write) => {
    const current = kernel.configFile.read();
    if (current.issues.some((issue) => issue.path === '<file>'))
      throw new ConfigChangeRefused(`cannot edit ${kernel.paths.configPath}: ${current.issues[0]!.message}`);
    const raw = structuredClone(current.raw) as Record<string, unknown>;
    const before = JSON.stringify(raw);
    edit(raw);
    if (JSON.stringify(raw) === before) return { via: 'file', changed: false };
    const key = (issue: { path: string; message: string }) => `${issue.path}\u0000${issue.message}`;
    const known = new Set((await kernel.configFile.check(current.raw as Record<string, unknown>)).map(key));
    const introduced = (await kernel.configFile.check(raw)).filter(
      (issue) => issue.level === 'error' && !known.has(key(issue)),
    );
    if (introduced.length > 0)
      throw new ConfigChangeRefused(
        `refusing to write the config, the change would make it invalid: ${introduced.map(formatIssue).join('; ')}`,
      );
    write(raw);
    return { via: 'file', changed: true };
  });
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The merge patch that turns `before` into `after` (arrays are replaced whole). */
export function diffMergePatch(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): Record<string, unknown> {
  const walk = (a: Record<string, unknown>, b: Record<string, unknown>, at: PathSegment[]): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(key in b)) out[key] = null;
      else if (isObject(a[key]) && isObject(b[key])) {
        const inner = walk(a[key] as Record<string, unknown>, b[key] as Record<string, unknown>, [...at, key]);
        if (Object.keys(inner).length > 0) out[key] = inner;
      } else if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) {
        if (b[key] === null)
          throw new Error(
            `${formatPath([...at, key])}: null cannot be written through a merge patch (null deletes); unset the key instead`,
          );
        out[key] = b[key];
      }
    }
    return out;
  };
  return walk(before, after, []);
}
