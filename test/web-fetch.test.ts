/**
 * web_fetch's limits and content handling against a local server (trusted by
 * tools.web.fetch.ssrfPolicy.allowedHostnames), and an agent turn with a scripted model that
 * calls it through the tool choke point (policy, before_tool_call).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin } from '../sdk/index.js';
import { useService } from '../sdk/services.js';
import type { AgentService } from '../sdk/agent/index.js';
import { agentStackDirs, createTestKernel, scriptedModel, type TestKernel } from '../sdk/testing.js';
import type { ModelRequest } from '../sdk/types/models.js';
import { domToMarkdown } from '../plugins/web-fetch/markdown.js';
import { REPO } from './helpers.js';
import { startWebServer, type WebServer } from './web-helpers.js';

const WEB_FETCH = join(REPO, 'plugins', 'web-fetch');
const text = (result: { content: Array<{ type: string; text?: string }> }) =>
  result.content.map((part) => part.text ?? '').join('');

let web: WebServer;
const trusted = (fetch: Record<string, unknown> = {}) => ({
  tools: { web: { fetch: { ssrfPolicy: { allowedHostnames: ['127.0.0.1'] }, ...fetch } } },
});

async function withKernel<T>(config: Record<string, unknown>, body: (kernel: TestKernel) => Promise<T>): Promise<T> {
  const kernel = await createTestKernel({ plugins: [WEB_FETCH], config });
  try {
    return await body(kernel);
  } finally {
    await kernel.dispose();
  }
}

beforeAll(async () => {
  web = await startWebServer();
});
afterAll(async () => {
  await web?.close();
});

describe('web_fetch limits', () => {
  it('cuts an oversized body at maxResponseBytes and stops reading', () =>
    withKernel(trusted({ maxResponseBytes: 32_000, maxChars: 100_000, maxCharsCap: 100_000 }), async (kernel) => {
      const result = await kernel.runTool('web_fetch', { url: `${web.origin}/big` });
      expect(result.isError).toBeFalsy();
      const details = result.details as Record<string, any>;
      expect(details).toMatchObject({
        truncated: true,
        rawLength: 32_000,
        warning: expect.stringMatching(/larger than 32000 bytes/),
      });
    }));

  it('gives up on a slow server at timeoutSeconds', () =>
    withKernel(trusted({ timeoutSeconds: 0.5 }), async (kernel) => {
      const started = Date.now();
      const result = await kernel.runTool('web_fetch', { url: `${web.origin}/slow` });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/timed out after 0\.5s/);
      expect(Date.now() - started).toBeLessThan(3000);
    }));

  it('stops redirect loops and chains longer than maxRedirects', () =>
    withKernel(trusted({ maxRedirects: 3 }), async (kernel) => {
      expect(text(await kernel.runTool('web_fetch', { url: `${web.origin}/loop-a` }))).toMatch(
        /redirect loop: .*\/loop-b → .*\/loop-a was already visited/,
      );
      const chain = await kernel.runTool('web_fetch', { url: `${web.origin}/chain/0` });
      expect(text(chain)).toMatch(/too many redirects \(more than 3\); the last one pointed to .*\/chain\/4/);
      expect(web.hits.filter((hit) => hit.startsWith('GET /chain/')).length).toBe(4);
      // Within the limit the final URL is reported.
      const ok = await kernel.runTool('web_fetch', { url: `${web.origin}/redirect?to=/text` });
      expect(ok.details).toMatchObject({ finalUrl: `${web.origin}/text`, status: 200 });
    }));

  it('refuses schemes other than http(s), bad URLs and disabled config with clear errors', () =>
    withKernel(trusted(), async (kernel) => {
      for (const url of ['file:///etc/passwd', 'ftp://127.0.0.1/x', 'about:blank']) {
        expect(text(await kernel.runTool('web_fetch', { url }))).toMatch(
          /only http and https URLs are allowed, not \w+:/,
        );
      }
      expect(text(await kernel.runTool('web_fetch', { url: 'not a url' }))).toMatch(/not a valid URL: not a url/);
      expect(text(await kernel.runTool('web_fetch', {}))).toMatch(/Invalid arguments for web_fetch: .*url/);
      await withKernel(trusted({ enabled: false }), async (off) => {
        expect(text(await off.runTool('web_fetch', { url: `${web.origin}/text` }))).toMatch(
          /tools\.web\.fetch\.enabled is false/,
        );
      });
    }));

  it('serves a repeat from the cache (keyed by URL and mode) until cacheTtlMinutes is 0', async () => {
    await withKernel(trusted(), async (kernel) => {
      const before = web.hits.filter((hit) => hit.startsWith('GET /json')).length;
      const first = await kernel.runTool('web_fetch', { url: `${web.origin}/json` });
      const second = await kernel.runTool('web_fetch', { url: `${web.origin}/json` });
      expect((first.details as any).cached).toBeUndefined();
      expect((second.details as any).cached).toBe(true);
      expect((second.details as any).text).toBe((first.details as any).text);
      await kernel.runTool('web_fetch', { url: `${web.origin}/json`, extractMode: 'text' });
      expect(web.hits.filter((hit) => hit.startsWith('GET /json')).length - before).toBe(2);
    });
    await withKernel(trusted({ cacheTtlMinutes: 0 }), async (kernel) => {
      const before = web.hits.filter((hit) => hit.startsWith('GET /json')).length;
      await kernel.runTool('web_fetch', { url: `${web.origin}/json` });
      const again = await kernel.runTool('web_fetch', { url: `${web.origin}/json` });
      expect((again.details as any).cached).toBeUndefined();
      expect(web.hits.filter((hit) => hit.startsWith('GET /json')).length - before).toBe(2);
    });
  });

  it('handles content types: JSON, plain text, gzip, binary, HTTP errors, text mode and maxChars', () =>
    withKernel(trusted(), async (kernel) => {
      const json = (await kernel.runTool('web_fetch', { url: `${web.origin}/json` })).details as any;
      expect(json).toMatchObject({ extractor: 'json', contentType: 'application/json' });
      expect(json.text).toContain('"tools": [\n    "web_fetch",');
      const plain = (await kernel.runTool('web_fetch', { url: `${web.origin}/text` })).details as any;
      expect(plain.text).toContain('plain text body, kept as is: <b>not html</b>');
      const gzip = (await kernel.runTool('web_fetch', { url: `${web.origin}/gzip` })).details as any;
      expect(gzip.text).toContain('compressed hello compressed hello');
      expect(text(await kernel.runTool('web_fetch', { url: `${web.origin}/image` }))).toMatch(
        /is image\/png, not text or HTML/,
      );
      expect(text(await kernel.runTool('web_fetch', { url: `${web.origin}/missing` }))).toMatch(
        /missing answered HTTP 404: ## Not here/,
      );
      const asText = (await kernel.runTool('web_fetch', { url: `${web.origin}/article`, extractMode: 'text' }))
        .details as any;
      expect(asText).toMatchObject({ extractMode: 'text', title: 'Lighthouses of the North Sea' });
      expect(asText.text).toContain('The lighthouses along the North Sea coast');
      expect(asText.text).not.toMatch(/\*\*|## |\]\(/);
      const short = (await kernel.runTool('web_fetch', { url: `${web.origin}/article`, maxChars: 200 })).details as any;
      expect(short.truncated).toBe(true);
      expect(short.rawLength).toBeGreaterThan(200);
    }));

  it('converts tables, quotes, code and nested lists to Markdown', async () => {
    const { parseHTML } = await import('linkedom');
    const { document } = parseHTML(
      '<html><body><blockquote><p>Quoted line</p></blockquote><table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>x|y</td></tr></table>' +
        '<ol><li>one<ul><li>inner</li></ul></li><li>two</li></ol><pre>a &lt; b\n  c</pre><p>x<br>y <img src="/i.png" alt="pic"></p></body></html>',
    );
    expect(domToMarkdown(document.body as never, { plain: false, baseUrl: 'https://example.com/a/' })).toBe(
      '> Quoted line\n\n| A | B |\n| --- | --- |\n| 1 | x\\|y |\n\n1. one\n  - inner\n2. two\n\n```\na < b\n  c\n```\n\nx\ny ![pic](https://example.com/i.png)',
    );
  });
});

describe('web_fetch in an agent turn', () => {
  async function agentKernel(tools: Record<string, unknown>, seen: string[], requests: ModelRequest[]) {
    const observer = definePlugin({
      id: 'observer',
      register(api) {
        api.on('before_tool_call', (event) => {
          seen.push(`${event.toolName} ${JSON.stringify(event.params)}`);
          return undefined;
        });
      },
    });
    const model = scriptedModel((request) => {
      requests.push(request);
      const last = request.messages[request.messages.length - 1]!;
      if (last.role === 'user')
        return { toolCalls: [{ name: 'web_fetch', arguments: { url: `${web.origin}/article` } }] };
      const result =
        last.role === 'toolResult' ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : '';
      return /Lighthouses of the North Sea/.test(result)
        ? 'The page is about lighthouses.'
        : `The fetch failed: ${result.slice(0, 120)}`;
    });
    const kernel = await createTestKernel({
      plugins: [...agentStackDirs(), WEB_FETCH, observer, model],
      config: {
        agents: { defaults: { model: 'scripted/main' }, list: [{ id: 'main', default: true }] },
        messages: { queue: { debounceMs: 0 } },
        tools,
      },
    });
    await kernel.start();
    return { kernel, agent: (await useService<AgentService>(kernel, 'agent'))! };
  }

  it('the model fetches a page through the choke point; before_tool_call sees the call', async () => {
    const seen: string[] = [];
    const requests: ModelRequest[] = [];
    const { kernel, agent } = await agentKernel(trusted().tools, seen, requests);
    try {
      const outcome = await agent.run({ sessionKey: 'agent:main:main', message: 'what is on that page?' });
      expect(outcome.text).toBe('The page is about lighthouses.');
      expect(requests[0]!.tools?.map((tool) => tool.name)).toContain('web_fetch');
      expect(seen).toEqual([`web_fetch {"url":"${web.origin}/article"}`]);
    } finally {
      await kernel.dispose();
    }
  });

  it('tools.deny of group:web hides web_fetch and blocks a call to it', async () => {
    const seen: string[] = [];
    const requests: ModelRequest[] = [];
    const { kernel, agent } = await agentKernel({ ...trusted().tools, deny: ['group:web'] }, seen, requests);
    try {
      const outcome = await agent.run({ sessionKey: 'agent:main:main', message: 'fetch it anyway' });
      expect(requests[0]!.tools?.map((tool) => tool.name) ?? []).not.toContain('web_fetch');
      expect(outcome.text).toMatch(/The fetch failed: .*Tool "web_fetch" is not allowed by the tool policy/);
      // Refused by policy before any hook ran or any request was made.
      expect(seen).toEqual([]);
    } finally {
      await kernel.dispose();
    }
  });
});
