/**
 * The effective TTS settings: OpenClaw's older `messages.tts`, the `tts` block, then the reply's
 * `channels.<id>.tts` and `channels.<id>.accounts.<account>.tts`, deep-merged (later wins), each
 * checked against this plugin's `tts` schema (the kernel checks `tts` itself), and the OpenClaw
 * keys this plugin does not implement named.
 */
import { formatPath, validateWith, type JsonSchema, type KernelServices } from '../../sdk/index.js';

export type AutoMode = 'off' | 'always' | 'inbound' | 'tagged';
export const AUTO_MODES: readonly AutoMode[] = ['off', 'always', 'inbound', 'tagged'];
export const LOCAL_CLI = 'tts-local-cli';

export interface TtsSettings {
  auto: AutoMode;
  provider?: string;
  providers: Record<string, Record<string, unknown>>;
  maxTextLength: number;
  timeoutMs: number;
  directives: boolean;
  allowProvider: boolean;
  prefsPath?: string;
}

export const DEFAULT_MAX_TEXT = 4096;
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Longest text an automatic reply speaks (OpenClaw's maxLength default; it summarizes, claw cuts). */
export const AUTO_MAX_CHARS = 1500;

type Node = Record<string, unknown>;
const isObject = (value: unknown): value is Node =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function deepMerge(base: Node, over: Node): Node {
  const out: Node = { ...base };
  for (const [key, value] of Object.entries(over))
    out[key] = isObject(value) && isObject(out[key]) ? deepMerge(out[key] as Node, value) : value;
  return out;
}

/** `local-cli` is taken as OpenClaw's `tts-local-cli`. */
export function providerId(id: string): string {
  const lower = id.trim().toLowerCase();
  return lower === 'local-cli' ? LOCAL_CLI : lower;
}

/** The reply's channel and account: their `channels.<id>.tts` and `…accounts.<id>.tts` blocks apply. */
export interface Where {
  channel?: string;
  accountId?: string;
}

/** Every TTS block of the config, in merge order (later wins), with its path. */
function layers(config: Node, where: Where | 'all'): Array<{ path: Array<string>; block: Node }> {
  const out: Array<{ path: string[]; block: Node }> = [];
  const add = (path: string[], value: unknown) => isObject(value) && out.push({ path, block: value });
  if (isObject(config.messages)) add(['messages', 'tts'], config.messages.tts);
  add(['tts'], config.tts);
  const channels = isObject(config.channels) ? config.channels : {};
  for (const [id, channel] of Object.entries(channels)) {
    if (!isObject(channel) || (where !== 'all' && id !== where.channel)) continue;
    add(['channels', id, 'tts'], channel.tts);
    for (const [account, settings] of Object.entries(isObject(channel.accounts) ? channel.accounts : {}))
      if (isObject(settings) && (where === 'all' || account === where.accountId))
        add(['channels', id, 'accounts', account, 'tts'], settings.tts);
  }
  return out;
}

/** What is wrong with any TTS block (the kernel checks `tts` itself), and what it sets that claw lacks. */
export function checkSettings(kernel: Pick<KernelServices, 'config'>, schema: JsonSchema | undefined): string[] {
  const all = layers(kernel.config() as Node, 'all');
  const issues = all.flatMap(({ path, block }) =>
    path[0] === 'tts' || !schema ? [] : validateWith(schema, block, path),
  );
  if (issues.length > 0)
    throw new Error(`invalid text-to-speech settings: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`);
  const warnings: string[] = [];
  if (all.some(({ path }) => path[0] === 'tts') && all.some(({ path }) => path[0] === 'messages'))
    warnings.push('both tts and messages.tts are set; tts wins where they differ');
  for (const { path, block } of all) {
    const where = formatPath(path);
    for (const key of ['persona', 'personas', 'summaryModel'])
      if (block[key] !== undefined)
        warnings.push(`${where}.${key} is an OpenClaw setting claw does not implement; ignored`);
    if (block.mode === 'all') warnings.push(`${where}.mode "all" is not implemented; only the final reply is spoken`);
    for (const id of Object.keys(isObject(block.providers) ? block.providers : {}))
      if (!['openai', 'elevenlabs', LOCAL_CLI].includes(providerId(id)))
        warnings.push(`${formatPath([...path, 'providers', id])} names a speech provider claw does not have; ignored`);
    for (const key of Object.keys(isObject(block.modelOverrides) ? block.modelOverrides : {}))
      if (key !== 'enabled' && key !== 'allowProvider')
        warnings.push(`${where}.modelOverrides.${key} is an OpenClaw setting claw does not implement; ignored`);
  }
  return warnings;
}

/** The settings for a reply on `where`: messages.tts, tts, the channel's, the account's, deep-merged. */
export function resolveSettings(kernel: Pick<KernelServices, 'config'>, where: Where = {}): TtsSettings {
  const raw = layers(kernel.config() as Node, where).reduce<Node>((merged, { block }) => deepMerge(merged, block), {});
  const providers: Record<string, Node> = {};
  for (const [id, block] of Object.entries(isObject(raw.providers) ? raw.providers : {}))
    providers[providerId(id)] = isObject(block) ? block : {};
  const overrides = isObject(raw.modelOverrides) ? raw.modelOverrides : {};
  const auto = (raw.auto as AutoMode | undefined) ?? (raw.enabled === true ? 'always' : 'off');
  return {
    auto,
    ...(typeof raw.provider === 'string' ? { provider: providerId(raw.provider) } : {}),
    providers,
    maxTextLength: typeof raw.maxTextLength === 'number' ? raw.maxTextLength : DEFAULT_MAX_TEXT,
    timeoutMs: typeof raw.timeoutMs === 'number' ? raw.timeoutMs : DEFAULT_TIMEOUT_MS,
    directives: overrides.enabled !== false,
    allowProvider: overrides.allowProvider === true,
    ...(typeof raw.prefsPath === 'string' ? { prefsPath: raw.prefsPath } : {}),
  };
}
