/**
 * config.schema.lookup: one config path's slice of the whole config schema, as OpenClaw's
 * Control UI asks for it to render a settings form — the node's own schema (scalar keywords
 * only, so the answer stays small), how a change there is applied (hot or restart), its UI
 * hint, and its direct children.
 */
import { CONFIG_ADMIN_SERVICE, type ConfigAdmin } from '../../sdk/config.js';
import { ErrorCodes, ProtocolError, type JsonSchema, type PluginApi } from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import { composeUiHints } from './config-methods.js';
import { reloadKind } from './reload-plan.js';

type Schema = Record<string, any>;
type Hints = Record<string, Record<string, unknown>>;

const MAX_SEGMENTS = 32;
/** Keywords a form needs to render a field; nested schemas are described by `children` instead. */
const KEPT_KEYWORDS = new Set([
  'title',
  'description',
  'type',
  'default',
  'enum',
  'const',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

const isSchema = (value: unknown): value is Schema => !!value && typeof value === 'object' && !Array.isArray(value);

/** The schema variants a node may take (anyOf/oneOf/allOf flattened), the node itself first. */
function variants(schema: Schema): Schema[] {
  const out = [schema];
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    for (const variant of (schema[key] as unknown[] | undefined) ?? []) if (isSchema(variant)) out.push(variant);
  }
  return out;
}

function child(schema: Schema, segment: string): Schema | undefined {
  for (const variant of variants(schema)) {
    if (isSchema(variant.properties?.[segment])) return variant.properties[segment];
    if (/^\d+$/.test(segment) || segment === '*') {
      if (isSchema(variant.items)) return variant.items;
    }
    if (isSchema(variant.additionalProperties)) return variant.additionalProperties;
    for (const [pattern, sub] of Object.entries((variant.patternProperties ?? {}) as Record<string, unknown>)) {
      if (isSchema(sub) && new RegExp(pattern).test(segment)) return sub;
    }
  }
  return undefined;
}

function hasChildren(schema: Schema): boolean {
  return variants(schema).some(
    (variant) =>
      Object.keys(variant.properties ?? {}).length > 0 ||
      isSchema(variant.additionalProperties) ||
      isSchema(variant.items),
  );
}

function strip(schema: Schema): Schema {
  return Object.fromEntries(Object.entries(schema).filter(([key]) => KEPT_KEYWORDS.has(key)));
}

/** The hint registered for this path, exactly or through `*` segments. */
function hintFor(hints: Hints, path: string): { hint?: Record<string, unknown>; hintPath?: string } {
  if (hints[path]) return { hint: hints[path], hintPath: path };
  const parts = path.split('.');
  for (const [key, hint] of Object.entries(hints)) {
    const pattern = key.split('.');
    if (pattern.length === parts.length && pattern.every((part, i) => part === '*' || part === parts[i])) {
      return { hint, hintPath: key };
    }
  }
  return {};
}

const kindOf = (path: string) => (path ? reloadKind(path.split('.')) : 'restart');

export function registerConfigLookup(api: PluginApi): void {
  const kernel = api.kernel;
  api.registerGatewayMethod('config.schema.lookup', {
    params: {
      type: 'object',
      required: ['path'],
      properties: { path: { type: 'string', minLength: 1 } },
    } as JsonSchema,
    scope: 'operator.read',
    description:
      'One config path of the schema: {path, schema, reloadKind, hint?, hintPath?, children: [{key, path, type, required, hasChildren, reloadKind, hint?, hintPath?}]} ("." is the root).',
    handler: async (params: { path: string }) => {
      const wantsRoot = params.path.trim() === '.';
      const path = wantsRoot
        ? ''
        : params.path
            .trim()
            .replace(/\[(\d+|\*)\]/g, '.$1')
            .replace(/^\.+|\.+$/g, '');
      const parts = path ? path.split('.') : [];
      const notFound = () => new ProtocolError(ErrorCodes.INVALID_REQUEST, 'config schema path not found');
      if ((!wantsRoot && parts.length === 0) || parts.length > MAX_SEGMENTS || parts.some((part) => !part)) {
        throw notFound();
      }
      const admin = await requireService<ConfigAdmin>(kernel, CONFIG_ADMIN_SERVICE, 'config.schema.lookup');
      let node: Schema | undefined = admin.configSchema(kernel.plugins()) as Schema;
      for (const part of parts) {
        node = node && child(node, part);
        if (!node) throw notFound();
      }
      const found = node!;
      const hints = composeUiHints(kernel.plugins());
      const required = new Set(variants(found).flatMap((variant) => (variant.required as string[] | undefined) ?? []));
      const childEntry = (key: string, schema: Schema, isRequired: boolean) => {
        const childPath = path ? `${path}.${key}` : key;
        return {
          key,
          path: childPath,
          type: schema.type,
          required: isRequired,
          hasChildren: hasChildren(schema),
          reloadKind: kindOf(childPath),
          ...hintFor(hints, childPath),
        };
      };
      const children: ReturnType<typeof childEntry>[] = [];
      const seen = new Set<string>();
      for (const variant of variants(found)) {
        for (const [key, schema] of Object.entries((variant.properties ?? {}) as Record<string, unknown>)) {
          if (!isSchema(schema) || seen.has(key)) continue;
          seen.add(key);
          children.push(childEntry(key, schema, required.has(key)));
        }
      }
      const wildcard = variants(found)
        .map((variant) => (isSchema(variant.additionalProperties) ? variant.additionalProperties : variant.items))
        .find(isSchema);
      if (wildcard) children.push(childEntry('*', wildcard, false));
      return {
        path: wantsRoot ? '.' : path,
        schema: strip(found),
        reloadKind: kindOf(path),
        ...hintFor(hints, path),
        children,
      };
    },
  });
}
