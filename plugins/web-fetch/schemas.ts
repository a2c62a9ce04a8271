/**
 * web_fetch's settings (`tools.web.fetch`, OpenClaw's names), as TypeBox: a build input.
 * `npm run gen` writes them into this plugin's manifest (`configContributions`) and into
 * generated/types.ts. web-search contributes `tools.web.search` beside them.
 */
import { Type } from 'typebox';

const Strict = { additionalProperties: false } as const;
const HostPatterns = (description: string) => Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description }));
/** OpenClaw's `ssrfPolicy` object (tools.web.fetch.ssrfPolicy); the host's "net" service enforces it. */
export const SsrfPolicySchema = Type.Object(
  {
    dangerouslyAllowPrivateNetwork: Type.Optional(
      Type.Boolean({ description: 'Allow every private, loopback and link-local destination (default false).' }),
    ),
    allowPrivateNetwork: Type.Optional(
      Type.Boolean({ description: 'Legacy alias of dangerouslyAllowPrivateNetwork.' }),
    ),
    allowedHostnames: HostPatterns(
      'Hosts trusted even on a private address: exact names or *.example.com (subdomains only).',
    ),
    blockedHostnames: HostPatterns('Hosts always refused, redirects included, before DNS and any allow rule.'),
    allowRfc2544BenchmarkRange: Type.Optional(Type.Boolean({ description: 'Allow 198.18.0.0/15 (fake-IP proxies).' })),
    allowIpv6UniqueLocalRange: Type.Optional(Type.Boolean({ description: 'Allow fc00::/7 (fake-IP proxies).' })),
  },
  Strict,
);

/** `tools.web.fetch`. */
export const WebFetchConfigSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'Offer web_fetch (default true).' })),
    maxChars: Type.Optional(
      Type.Integer({
        minimum: 100,
        description: 'Characters of text returned by default (default 20000; capped by maxCharsCap).',
      }),
    ),
    maxCharsCap: Type.Optional(
      Type.Integer({ minimum: 100, description: 'Most characters a call may ask for with maxChars (default 20000).' }),
    ),
    maxResponseBytes: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'Bytes of a response read before it is cut (default 750000; clamped to 32000-10000000).',
      }),
    ),
    timeoutSeconds: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, description: 'Limit for the whole fetch, redirects included (default 30).' }),
    ),
    cacheTtlMinutes: Type.Optional(
      Type.Number({ minimum: 0, description: 'How long results are reused (default 15; 0: no cache).' }),
    ),
    maxRedirects: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 20, description: 'Redirects followed, each re-checked (default 3).' }),
    ),
    readability: Type.Optional(
      Type.Boolean({
        description: 'Extract the main article with Readability (default true); false converts the whole page.',
      }),
    ),
    userAgent: Type.Optional(
      Type.String({ minLength: 1, description: 'User-Agent header (default: a Chrome-like one).' }),
    ),
    ssrfPolicy: Type.Optional(SsrfPolicySchema),
    dnsServers: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description:
          'claw: resolve fetched hosts through these DNS servers ("1.1.1.1", "127.0.0.1:5353") instead of the system resolver.',
      }),
    ),
  },
  Strict,
);

/** `tools.web` as far as web_fetch reads it. */
export const WebFetchToolsSchema = Type.Object(
  {
    fetch: Type.Optional(WebFetchConfigSchema),
  },
  Strict,
);

export const configContributions = { tools: { web: WebFetchToolsSchema } };
