/**
 * Which files a call may touch. On the host: any path (relative ones from the workspace).
 * In a sandbox: only the sandbox's workspace — its host directory `spec.workspaceRoot`,
 * which the model knows as `spec.workdir` (/workspace) — checked as written and again with
 * symlinks resolved, so a link planted inside cannot lead out. Read-only when the sandbox's
 * workspaceAccess is "ro".
 */
import { realpath } from 'node:fs/promises';
import { dirname, join, posix, relative, sep } from 'node:path';
import { sandboxOf, type ToolContext } from '../../sdk/index.js';
import { ParamError } from './args.js';
import { resolvePath } from './files.js';

export interface FileScope {
  resolve(input: string): Promise<string>;
  /** Why writes are refused, if they are. */
  readOnly?: string;
}

const inside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !rel.startsWith(sep));
};

async function realpathOfDeepest(path: string): Promise<string> {
  const rest: string[] = [];
  let existing = path;
  for (;;) {
    try {
      return join(await realpath(existing), ...rest.reverse());
    } catch {
      const parent = dirname(existing);
      if (parent === existing) return path;
      rest.push(relative(parent, existing));
      existing = parent;
    }
  }
}

export function fileScope(ctx: ToolContext, workspaceDir: string): FileScope {
  const sandbox = sandboxOf(ctx);
  if (!sandbox) return { resolve: async (input) => resolvePath(input, workspaceDir) };
  const { workspaceRoot: root, workdir, workspaceAccess } = sandbox.spec;
  return {
    readOnly: workspaceAccess === 'ro' ? `the sandbox workspace is read-only (workspaceAccess "ro")` : undefined,
    async resolve(input) {
      // The model sees sandbox paths: absolute ones are read inside the sandbox, "~" is not the host's home.
      const inSandbox = posix.resolve(workdir, input.startsWith('~') ? input.replace(/^~/, workdir) : input);
      const rel = posix.relative(workdir, inSandbox);
      if (rel.startsWith('..') || posix.isAbsolute(rel)) {
        throw new ParamError(
          `path ${input} is outside the sandbox workspace ${workdir}; file tools only reach ${workdir}`,
        );
      }
      const path = join(root, ...rel.split('/'));
      const realRoot = await realpath(root);
      if (!inside(realRoot, await realpathOfDeepest(path))) {
        throw new ParamError(`path ${input} leads outside the sandbox workspace ${workdir} through a symbolic link`);
      }
      return path;
    },
  };
}
