/**
 * The keys plugins add to the objects the kernel owns (`agents.defaults`, each
 * `agents.list[]` entry, `tools`), checked with the manifests of every installed plugin,
 * on or off, as OpenClaw checks the config of installed plugins: a config that names a
 * disabled plugin's setting stays valid, and nothing is loaded to find out. A key neither
 * the kernel nor a plugin declares is an error naming it (an OpenClaw key: a warning).
 */
import { KERNEL_CONFIG_SCHEMA } from '../kernel/generated/schemas.js';
import {
  formatPath,
  validateWith,
  type ConfigIssue,
  type JsonSchema,
  type KernelConfig,
  type PathSegment,
  type PluginRecord,
} from '../kernel/index.js';
import { configContributions, type ContributedKey, type ContributionPlace } from './config-schema.js';
import { acceptOpenclawKey } from './config-checks.js';

type Node = Record<string, any>;
const kernelKeys = (schema: Node) => new Set(Object.keys(schema.properties ?? {}));
const agentsSchema = (KERNEL_CONFIG_SCHEMA as Node).properties.agents.properties;
/** Per place: the kernel's own keys, and whether any other key must be contributed. */
const PLACES: Record<ContributionPlace, { own: Set<string>; closed: boolean }> = {
  defaults: { own: kernelKeys(agentsSchema.defaults), closed: true },
  list: { own: kernelKeys(agentsSchema.list.items), closed: true },
  // `tools` has always let unknown keys through (OpenClaw has many claw does not implement).
  tools: { own: kernelKeys((KERNEL_CONFIG_SCHEMA as Node).properties.tools), closed: false },
};

const isObject = (value: unknown): value is Node =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export function contributedConfigIssues(config: KernelConfig, records: readonly PluginRecord[]): ConfigIssue[] {
  const contributions = configContributions(records);
  const issues: ConfigIssue[] = [];
  const agents: Node = isObject(config.agents) ? config.agents : {};
  const places: Array<[ContributionPlace, PathSegment[], unknown]> = [
    ['defaults', ['agents', 'defaults'], agents.defaults],
    ...(Array.isArray(agents.list) ? agents.list : []).map(
      (entry, index): [ContributionPlace, PathSegment[], unknown] => ['list', ['agents', 'list', index], entry],
    ),
    ['tools', ['tools'], config.tools],
  ];
  for (const [place, base, value] of places) {
    if (!isObject(value)) continue; // the kernel schema has reported it
    const { own, closed } = PLACES[place];
    for (const [key, setting] of Object.entries(value)) {
      const path = formatPath([...base, key]);
      const contributed = contributions[place].get(key);
      if (own.has(key)) {
        if (contributed)
          issues.push(
            ...contributed.owners.map((owner) => ({
              level: 'warning' as const,
              path,
              message: `plugin "${owner.id}" declares this key, which the kernel owns; its schema is not used`,
              owner: owner.id,
            })),
          );
      } else if (contributed) {
        issues.push(...check(contributed, setting, [...base, key]));
      } else if (closed) {
        issues.push(acceptOpenclawKey({ level: 'error', path, message: 'is not a known key', owner: 'kernel' }));
      }
    }
  }
  return issues;
}

function check({ schema, owners }: ContributedKey, value: unknown, path: PathSegment[]): ConfigIssue[] {
  const owner = owners.map((record) => record.id).join(', ');
  let problems;
  try {
    problems = validateWith(schema as JsonSchema, structuredClone(value), path);
  } catch (error) {
    return [
      {
        level: 'error',
        path: formatPath(path),
        message: `cannot be checked: the contributed schema does not compile (${(error as Error).message})`,
        owner,
      },
    ];
  }
  const issues: ConfigIssue[] = problems.map((problem) => acceptOpenclawKey({ level: 'error', ...problem, owner }));
  if (!issues.some((issue) => issue.level === 'error') && owners.every((record) => !record.enabled)) {
    const off = owners.map((record) => `plugin "${record.id}", which is off (${record.reason})`).join(' and ');
    issues.push({ level: 'warning', path: formatPath(path), message: `belongs to ${off}; kept but unused`, owner });
  }
  return issues;
}
