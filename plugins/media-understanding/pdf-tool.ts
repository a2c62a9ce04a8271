/**
 * The `pdf` tool (OpenClaw's name, group:media): a PDF's text, from a path in the agent's
 * workspace — judged by the same containment as the file tools (sdk/fs-contain.ts: real
 * paths, symlinks, hard links, /proc) — or an http(s) URL fetched through the guarded net
 * under tools.web.fetch.ssrfPolicy (narrowed for sandboxed sessions). Size-capped by
 * tools.media.document.maxBytes; a page range is optional.
 */
import { posix, resolve, join } from 'node:path';
import {
  errorResult,
  openChecked,
  sandboxOf,
  textResult,
  type Containment,
  type KernelServices,
  type RuntimeDeps,
  type SandboxRouter,
  type ToolContext,
  type ToolResult,
} from '../../sdk/index.js';
import { SsrfBlockedError, type GuardedNet, type SsrfPolicy } from '../../sdk/net/index.js';
import { extractPdf, UnreadableDocument } from './document.js';
import { formatBytes, mediaSettings } from './settings.js';

export interface PdfParams {
  pdf: string;
  pages?: string;
  maxChars?: number;
}

export const PDF_TOOL_PARAMETERS = {
  type: 'object',
  additionalProperties: false,
  required: ['pdf'],
  properties: {
    pdf: {
      type: 'string',
      minLength: 1,
      description: 'Path of a PDF in the workspace (relative to it), or an http(s) URL',
    },
    pages: { type: 'string', description: 'Pages to read, such as "1-3,5" (default: all, up to the page cap)' },
    maxChars: { type: 'integer', minimum: 100, description: 'Most characters of text to return' },
  },
} as const;

export class PdfTool {
  constructor(
    private readonly kernel: Pick<KernelServices, 'config' | 'paths'>,
    private readonly net: GuardedNet,
    private readonly deps: RuntimeDeps,
    private readonly router: () => Promise<SandboxRouter>,
  ) {}

  async run(params: PdfParams, ctx: ToolContext): Promise<ToolResult> {
    const config = this.kernel.config();
    const limits = mediaSettings(config).document;
    const source = params.pdf.trim();
    let data: Buffer;
    try {
      data = /^https?:\/\//i.test(source)
        ? await this.download(source, limits.maxBytes, ctx)
        : await this.readLocal(source, limits.maxBytes, ctx);
    } catch (error) {
      return errorResult(`pdf: ${(error as Error).message}`, { pdf: source });
    }
    try {
      const maxChars = Math.min(params.maxChars ?? limits.maxChars, limits.maxChars);
      const extracted = await extractPdf(data, this.deps, { maxChars, maxPages: limits.maxPages, pages: params.pages });
      const read = extracted.pagesRead ?? [];
      const range = read.length === extracted.pages ? 'all pages' : `pages ${read.join(', ')}`;
      return textResult(
        `PDF ${source}: ${extracted.pages} page(s); ${range}.\n\n${extracted.text || '[No extractable text]'}`,
        {
          pdf: source,
          pages: extracted.pages,
          pagesRead: read,
          truncated: extracted.truncated,
        },
      );
    } catch (error) {
      if (error instanceof UnreadableDocument) return errorResult(`pdf: ${source}: ${error.message}`, { pdf: source });
      throw error;
    }
  }

  /** A workspace file, through the file tools' containment, refused before reading when too large. */
  private async readLocal(input: string, maxBytes: number, ctx: ToolContext): Promise<Buffer> {
    const sandbox = sandboxOf(ctx);
    const workspace = ctx.workspaceDir ?? this.kernel.paths.workspaceDir;
    let absolute: string;
    let containment: Containment | undefined;
    if (sandbox) {
      const { workspaceRoot, workdir } = sandbox.spec;
      const rel = posix.relative(workdir, posix.resolve(workdir, input));
      if (rel.startsWith('..') || posix.isAbsolute(rel))
        throw new Error(`path ${input} is outside the sandbox workspace ${workdir}`);
      absolute = join(workspaceRoot, ...rel.split('/'));
      containment = { workspace: workspaceRoot, setting: 'the sandbox' };
    } else {
      absolute = resolve(workspace, input.replace(/^~(?=\/|$)/, process.env.HOME ?? '~'));
      const tools = this.kernel.config().tools as { fs?: { workspaceOnly?: boolean } } | undefined;
      containment = tools?.fs?.workspaceOnly !== false ? { workspace, setting: 'tools.fs.workspaceOnly' } : undefined;
    }
    const opened = await openChecked(absolute, input, containment).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') throw new Error(`${input} does not exist`);
      throw error;
    });
    if (opened === 'directory') throw new Error(`${input} is a directory, not a PDF`);
    try {
      if (opened.size > maxBytes)
        throw new Error(
          `${input} is ${formatBytes(opened.size)}, over the ${formatBytes(maxBytes)} limit (tools.media.document.maxBytes)`,
        );
      return await opened.handle.readFile();
    } finally {
      await opened.handle.close();
    }
  }

  private async download(url: string, maxBytes: number, ctx: ToolContext): Promise<Buffer> {
    const config = this.kernel.config();
    const configured =
      (config.tools as { web?: { fetch?: { ssrfPolicy?: SsrfPolicy } } } | undefined)?.web?.fetch?.ssrfPolicy ?? {};
    const route = (await this.router()).route(config, {
      agentId: ctx.agentId,
      sessionKey: ctx.sessionKey,
      workspaceDir: this.kernel.paths.workspaceDir,
      stateDir: this.kernel.paths.stateDir,
    });
    const policy: SsrfPolicy = route.sandboxed ? { ...configured, denyHostLoopback: true } : configured;
    try {
      const response = await this.net.fetch(url, {
        policy,
        maxBytes: maxBytes + 1,
        timeoutMs: 60_000,
        headers: { accept: 'application/pdf,*/*;q=0.5' },
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      if (response.status < 200 || response.status >= 300)
        throw new Error(`${url} answered HTTP ${response.status} ${response.statusText}`.trim());
      if (response.truncated || response.body.length > maxBytes)
        throw new Error(`${url} is over the ${formatBytes(maxBytes)} limit (tools.media.document.maxBytes)`);
      return response.body;
    } catch (error) {
      if (error instanceof SsrfBlockedError) throw new Error(`refused ${url}: ${error.message}`);
      throw error;
    }
  }
}
