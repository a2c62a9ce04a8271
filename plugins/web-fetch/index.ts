/**
 * web_fetch: read one web page for the agent. Settings come from tools.web.fetch on every
 * call; the SSRF policy is tools.web.fetch.ssrfPolicy, narrowed for sandboxed sessions.
 */
import { definePlugin, errorResult, type ToolContext } from '../../sdk/index.js';
import { guardedNet } from '../../sdk/net/index.js';
import { requireService } from '../../sdk/services.js';
import { SANDBOX_ROUTE_SERVICE, type SandboxRouter } from '../../sdk/sandbox/index.js';
import { WebFetcher } from './fetch-tool.js';
import { sessionSsrfPolicy } from './session-policy.js';
import { fetchSettings } from './settings.js';

interface Params {
  url: string;
  extractMode?: 'markdown' | 'text';
  maxChars?: number;
}

export default definePlugin({
  id: 'web-fetch',
  register(api) {
    const fetcher = new WebFetcher(guardedNet(api.kernel, 'web_fetch'));
    api.registerTool({
      name: 'web_fetch',
      label: 'Web fetch',
      description:
        'Fetch an http(s) URL with a plain GET (no JavaScript) and return its main readable content as Markdown (or text), ' +
        'with the title and final URL. Private, local and internal addresses are refused. Use the browser for pages that need ' +
        'scripts or a login.',
      parameters: {
        type: 'object',
        additionalProperties: false,
        required: ['url'],
        properties: {
          url: { type: 'string', minLength: 1, description: 'The http or https URL to fetch' },
          extractMode: { type: 'string', enum: ['markdown', 'text'], description: 'Output format (default markdown)' },
          maxChars: {
            type: 'integer',
            minimum: 100,
            description: 'Most characters of content to return (capped by tools.web.fetch.maxCharsCap)',
          },
        },
      },
      async execute(params: Params, ctx: ToolContext) {
        const config = api.kernel.config();
        const settings = fetchSettings(config);
        if (!settings.enabled) return errorResult('web_fetch is turned off (tools.web.fetch.enabled is false).');
        const router = await requireService<SandboxRouter>(api.kernel, SANDBOX_ROUTE_SERVICE, 'web_fetch');
        const policy = sessionSsrfPolicy(router, settings.ssrfPolicy, config, api.kernel.paths, ctx);
        return fetcher.run(
          {
            url: params.url.trim(),
            extractMode: params.extractMode ?? 'markdown',
            maxChars: params.maxChars,
            policy,
            signal: ctx.signal,
          },
          settings,
        );
      },
    });
  },
});
