/**
/**
 * The file tools: read, write, edit and apply_patch. Relative paths resolve against the
 * agent's workspace (the call's `workspaceDir`, else the kernel's). With
 * `tools.fs.workspaceOnly` (all four tools; on unless set to false) or
 * `tools.exec.applyPatch.workspaceOnly` (apply_patch; on unless set to false) they only touch
 * files inside it (contain.ts). In a sandboxed session they are always confined to the
 * sandbox's workspace (scope.ts maps the model's /workspace paths onto it), read-only when its
 * workspaceAccess is "ro".
 */
import { definePlugin, sandboxOf, type ToolContext, type Containment } from '../../sdk/index.js';
import { applyPatchTool } from './apply-patch.js';
import { guard, optionalInteger, ParamError, requiredString } from './args.js';
import { editFileTool } from './edit.js';
import { readFileTool } from './read.js';
import { fileScope, type FileScope } from './scope.js';
import { writeFileTool } from './write.js';

interface FsConfig {
  maxReadBytes: number;
  maxReadLines: number;
}

type Params = Record<string, unknown>;

const pathParam = {
  type: 'string',
  minLength: 1,
  description: 'File path, relative to the workspace (or absolute, unless the tools are limited to the workspace)',
} as const;

export default definePlugin<FsConfig>({
  id: 'tools-fs',
  register(api) {
    const limits = { maxReadBytes: api.config.maxReadBytes, maxReadLines: api.config.maxReadLines };
    const workspace = (ctx: ToolContext) => ctx.workspaceDir ?? api.kernel.paths.workspaceDir;
    const scope = (ctx: ToolContext) => fileScope(ctx, workspace(ctx));
    const writable = (ctx: ToolContext): FileScope => {
      const files = scope(ctx);
      if (files.readOnly) throw new ParamError(`cannot change files: ${files.readOnly}`);
      return files;
    };
    // Read on every call, so a config reload applies to the next one.
    const containment = (ctx: ToolContext, tool: 'fs' | 'apply_patch'): Containment | undefined => {
      const sandbox = sandboxOf(ctx);
      if (sandbox) return { workspace: sandbox.spec.workspaceRoot, setting: 'the sandbox' };
      const tools = api.kernel.config().tools as
        { fs?: { workspaceOnly?: boolean }; exec?: { applyPatch?: { workspaceOnly?: boolean } } } | undefined;
      // On by default (OpenClaw's default is off): a file outside the workspace, such as
      // ~/.openclaw/openclaw.json, is never the model's to read or change unless the operator says so.
      if (tools?.fs?.workspaceOnly !== false) return { workspace: workspace(ctx), setting: 'tools.fs.workspaceOnly' };
      if (tool === 'apply_patch' && tools?.exec?.applyPatch?.workspaceOnly !== false) {
        return { workspace: workspace(ctx), setting: 'tools.exec.applyPatch.workspaceOnly' };
      }
      return undefined;
    };

    api.registerTool({
      name: 'read',
      label: 'Read',
      runsInSandbox: true,
      description:
        `Read a text file (or a PNG/JPEG/GIF/WebP image). Text is returned as is, at most ${limits.maxReadLines} lines or ` +
        `${limits.maxReadBytes} bytes per call; when more remains the result ends with the offset to continue from. ` +
        'Use offset and limit to read part of a large file.',
      parameters: {
        type: 'object',
        additionalProperties: false,
        properties: {
          path: pathParam,
          offset: { type: 'integer', minimum: 1, description: 'First line to return (1-based, default 1)' },
          limit: { type: 'integer', minimum: 1, description: 'Most lines to return' },
        },
        required: ['path'],
      },
      execute: (params: Params, ctx) =>
        guard('read', async () => {
          const path = requiredString(params, 'path');
          return readFileTool(
            {
              path,
              absolutePath: await scope(ctx).resolve(path),
              offset: optionalInteger(params, 'offset', 1),
              limit: optionalInteger(params, 'limit', 1),
              containment: containment(ctx, 'fs'),
            },
            limits,
          );
        }),
    });

    api.registerTool({
      name: 'write',
      label: 'Write',
      runsInSandbox: true,
      description:
        'Create or overwrite a file with the given content. Parent directories are created as needed. ' +
        'Prefer edit or apply_patch to change part of an existing file.',
      parameters: {
        type: 'object',
        additionalProperties: false,
        properties: {
          path: pathParam,
          content: { type: 'string', description: 'The complete new content of the file' },
        },
        required: ['path', 'content'],
      },
      execute: (params: Params, ctx) =>
        guard('write', async () => {
          const path = requiredString(params, 'path');
          const content = requiredString(params, 'content', { allowEmpty: true });
          return writeFileTool(path, await writable(ctx).resolve(path), content, containment(ctx, 'fs'));
        }),
    });

    api.registerTool({
      name: 'edit',
      label: 'Edit',
      runsInSandbox: true,
      description:
        'Replace one exact span of a text file. oldText must match the file exactly (whitespace included) and occur ' +
        'exactly once; add surrounding lines to make it unique.',
      parameters: {
        type: 'object',
        additionalProperties: false,
        properties: {
          path: pathParam,
          oldText: { type: 'string', minLength: 1, description: 'Exact text to replace; must occur exactly once' },
          newText: { type: 'string', description: 'Replacement text (empty to delete oldText)' },
        },
        required: ['path', 'oldText', 'newText'],
      },
      execute: (params: Params, ctx) =>
        guard('edit', async () => {
          const path = requiredString(params, 'path');
          return editFileTool({
            path,
            absolutePath: await writable(ctx).resolve(path),
            oldText: requiredString(params, 'oldText'),
            newText: requiredString(params, 'newText', { allowEmpty: true }),
            containment: containment(ctx, 'fs'),
          });
        }),
    });

    api.registerTool({
      name: 'apply_patch',
      label: 'Apply patch',
      runsInSandbox: true,
      description:
        'Add, update, move and delete files with one patch; either every change applies or none does. Format:\n' +
        '*** Begin Patch\n' +
        '*** Add File: path/new.txt\n+line 1\n+line 2\n' +
        '*** Update File: path/app.ts\n*** Move to: path/renamed.ts   (optional)\n' +
        '@@ optional line to find first (e.g. a function signature)\n context line\n-removed line\n+added line\n' +
        '*** End of File   (optional: the hunk ends at the end of the file)\n' +
        '*** Delete File: path/old.txt\n' +
        '*** End Patch\n' +
        'Give about 3 lines of unchanged context around each change. Paths are relative to the workspace.',
      parameters: {
        type: 'object',
        additionalProperties: false,
        properties: {
          input: {
            type: 'string',
            minLength: 1,
            description: 'The whole patch, from "*** Begin Patch" to "*** End Patch"',
          },
        },
        required: ['input'],
      },
      execute: (params: Params, ctx) =>
        guard('apply_patch', async () =>
          applyPatchTool(requiredString(params, 'input'), writable(ctx).resolve, containment(ctx, 'apply_patch')),
        ),
    });
  },
});
