/**
 * Media understanding (issue 36): the "media-understanding" service the agent asks before a
 * turn whose message came with saved files (service.ts), and the pdf tool (pdf-tool.ts).
 * Settings come from tools.media on every call, so a config reload applies at once.
 */
import { definePlugin, MEDIA_UNDERSTANDING_SERVICE, runtimeDeps, type ToolContext } from '../../sdk/index.js';
import { guardedNet } from '../../sdk/net/index.js';
import { requireService } from '../../sdk/services.js';
import { SANDBOX_ROUTE_SERVICE, type SandboxRouter } from '../../sdk/sandbox/index.js';
import { PDF_TOOL_PARAMETERS, PdfTool, type PdfParams } from './pdf-tool.js';
import { MediaStep } from './service.js';

export default definePlugin({
  id: 'media-understanding',
  register(api) {
    const deps = runtimeDeps(api.kernel, 'media understanding');
    const step = new MediaStep(api.kernel, deps, api.logger);
    api.registerService({ id: MEDIA_UNDERSTANDING_SERVICE, api: step });
    const pdf = new PdfTool(api.kernel, guardedNet(api.kernel, 'pdf'), deps, () =>
      requireService<SandboxRouter>(api.kernel, SANDBOX_ROUTE_SERVICE, 'pdf'),
    );
    api.registerTool({
      name: 'pdf',
      label: 'PDF',
      description:
        "Read a PDF's text: a file in the workspace (path) or an http(s) URL (private and internal addresses are refused). " +
        'Optionally only some pages ("1-3,5"). Long documents are cut at a character limit.',
      parameters: PDF_TOOL_PARAMETERS,
      execute: (params: PdfParams, ctx: ToolContext) => pdf.run(params, ctx),
    });
  },
});
