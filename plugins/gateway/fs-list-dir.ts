/**
 * OpenClaw's fs.listDir: the directories in one folder of the gateway host, for the Control
 * UI's folder picker (choosing an agent workspace). As OpenClaw: an admin may browse any
 * absolute path; a write-scoped client only inside an agent's workspace. The containment is
 * decided on real paths, so `..` and symlinks cannot lead a write-scoped client out: the
 * folder asked for is resolved with realpath before the check, and a symlinked entry is
 * listed only when its target stays inside the same workspace. Files are never listed or read.
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { agentIds, agentPaths, defaultAgentId } from '../../sdk/agent/index.js';
import {
  ErrorCodes,
  NODES_SERVICE,
  ProtocolError,
  type KernelConfig,
  type NodeService,
  type PluginApi,
} from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';

interface DirEntry {
  name: string;
  path: string;
  hidden?: true;
}

function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

async function realOrNull(path: string): Promise<string | null> {
  return realpath(path).catch(() => null);
}

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCodes.INVALID_REQUEST, message);
}

/** Directories of `dir` (dot-folders last); `within` keeps symlinks from pointing out of a workspace. */
async function listDirectories(dir: string, within?: string): Promise<DirEntry[]> {
  let dirents;
  try {
    dirents = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    throw invalid(`cannot list ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const entries: DirEntry[] = [];
  for (const dirent of dirents) {
    const path = join(dir, dirent.name);
    let isDirectory = dirent.isDirectory();
    if (dirent.isSymbolicLink()) {
      const target = await realOrNull(path);
      isDirectory =
        target !== null &&
        (within === undefined || inside(within, target)) &&
        (await stat(target).then(
          (info) => info.isDirectory(),
          () => false,
        ));
    }
    if (!isDirectory) continue;
    entries.push({ name: dirent.name, path, ...(dirent.name.startsWith('.') ? { hidden: true as const } : {}) });
  }
  return entries.sort((a, b) =>
    Boolean(a.hidden) !== Boolean(b.hidden) ? (a.hidden ? 1 : -1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
}

export function registerFsListDir(api: PluginApi): void {
  const kernel = api.kernel;
  const config = () => kernel.config() as KernelConfig;

  api.registerGatewayMethod('fs.listDir', {
    params: {
      type: 'object',
      additionalProperties: false,
      properties: { path: { type: 'string', minLength: 1 }, nodeId: { type: 'string', minLength: 1 } },
    },
    // OpenClaw's scope is dynamic: write inside agent workspaces, admin anywhere else and for nodes.
    scope: 'operator.write',
    description:
      'The folders in one directory of the gateway host: {path, parent?, home, entries: [{name, path, hidden?}]}. Without admin, only inside an agent workspace.',
    handler: async (params: { path?: string; nodeId?: string }, ctx) => {
      const admin = (ctx.scopes ?? []).includes('operator.admin');
      if (params.nodeId !== undefined) {
        if (!admin) throw new ProtocolError(ErrorCodes.FORBIDDEN, 'missing scope: operator.admin');
        // As OpenClaw: relayed to the node's own fs.listDir, through the node command policy.
        const nodes = await requireService<NodeService>(api.kernel, NODES_SERVICE, 'fs.listDir on a node');
        try {
          return await nodes.invoke(params.nodeId, 'fs.listDir', params.path ? { path: params.path } : {});
        } catch (error) {
          const code = (error as { code?: string }).code;
          throw new ProtocolError(
            code === 'NOT_FOUND' || code === 'COMMAND_NOT_ALLOWED'
              ? ErrorCodes.INVALID_REQUEST
              : ErrorCodes.UNAVAILABLE,
            (error as Error).message,
          );
        }
      }
      const home = homedir();
      if (params.path !== undefined && !isAbsolute(params.path)) throw invalid('fs.listDir path must be absolute');
      if (admin) {
        const path = resolve(params.path ?? home);
        const parent = dirname(path);
        return { path, ...(parent !== path ? { parent } : {}), home, entries: await listDirectories(path) };
      }
      const roots = (
        await Promise.all(
          [...new Set(agentIds(config()))].map((id) => realOrNull(agentPaths(config(), id, kernel.paths).workspaceDir)),
        )
      ).filter((root): root is string => root !== null);
      const requested = params.path ?? agentPaths(config(), defaultAgentId(config()), kernel.paths).workspaceDir;
      const real = await realOrNull(requested);
      const root = real === null ? undefined : roots.find((candidate) => inside(candidate, real));
      if (real === null || root === undefined) {
        throw new ProtocolError(ErrorCodes.FORBIDDEN, 'missing scope: operator.admin', {
          code: 'MISSING_SCOPE',
          missingScope: 'operator.admin',
          requiredScopes: ['operator.admin'],
        });
      }
      const entries = await listDirectories(real, root);
      // A workspace's own folder is as far up as a write-scoped client may go.
      return { path: real, ...(real !== root ? { parent: dirname(real) } : {}), home, entries };
    },
  });
}
