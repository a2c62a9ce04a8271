/**
 * web_search's settings (`tools.web.search`, OpenClaw's names), as TypeBox: a build input.
 * `npm run gen` writes them into this plugin's manifest (`configContributions`) and into
 * generated/types.ts. web-fetch contributes `tools.web.fetch` beside them.
 */
import { Type } from 'typebox';

const Strict = { additionalProperties: false } as const;

/** `tools.web.search`. */
export const WebSearchConfigSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'Offer web_search (default true; it needs a provider).' })),
    provider: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'brave, searxng or duckduckgo (omit: the first configured of brave, searxng).',
      }),
    ),
    maxResults: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10,
        description: 'Results per query when the call gives no count (default 5).',
      }),
    ),
    timeoutSeconds: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, description: 'Limit for one provider request (default 30).' }),
    ),
    cacheTtlMinutes: Type.Optional(
      Type.Number({ minimum: 0, description: 'How long results are reused (default 15; 0: no cache).' }),
    ),
    apiKey: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Legacy Brave API key (plugins.entries.brave.config.webSearch.apiKey and BRAVE_API_KEY are the usual places).',
      }),
    ),
  },
  Strict,
);

/** `tools.web` as far as web_search reads it. */
export const WebSearchToolsSchema = Type.Object(
  {
    search: Type.Optional(WebSearchConfigSchema),
  },
  Strict,
);

export const configContributions = { tools: { web: WebSearchToolsSchema } };
