/**
 * The effective TTS settings: OpenClaw's older `messages.tts` with the `tts` block deep-merged
 * over it, checked against this plugin's `tts` schema (the kernel checks `tts` itself; this
 * also covers `messages.tts`), and the OpenClaw keys this plugin does not implement named.
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

export function resolveSettings(
  kernel: Pick<KernelServices, 'config'>,
  schema: JsonSchema | undefined,
): { settings: TtsSettings; warnings: string[] } {
  const config = kernel.config() as Node;
  const legacy = isObject(config.messages) && isObject(config.messages.tts) ? config.messages.tts : undefined;
  const top = isObject(config.tts) ? config.tts : undefined;
  const raw = deepMerge(legacy ?? {}, top ?? {});
  if (legacy && schema) {
    const issues = validateWith(schema, legacy, ['messages', 'tts']);
    if (issues.length > 0)
      throw new Error(`invalid text-to-speech settings: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`);
  }
  const where = top ? 'tts' : 'messages.tts';
  const warnings: string[] = [];
  if (legacy && top) warnings.push('both tts and messages.tts are set; tts wins where they differ');
  for (const key of ['persona', 'personas', 'summaryModel'])
    if (raw[key] !== undefined)
      warnings.push(`${where}.${key} is an OpenClaw setting claw does not implement; ignored`);
  if (raw.mode === 'all') warnings.push(`${where}.mode "all" is not implemented; only the final reply is spoken`);
  const providers: Record<string, Node> = {};
  for (const [id, block] of Object.entries(isObject(raw.providers) ? raw.providers : {})) {
    const key = providerId(id);
    if (!['openai', 'elevenlabs', LOCAL_CLI].includes(key))
      warnings.push(`${formatPath([where, 'providers', id])} names a speech provider claw does not have; ignored`);
    providers[key] = isObject(block) ? block : {};
  }
  const overrides = isObject(raw.modelOverrides) ? raw.modelOverrides : {};
  for (const key of Object.keys(overrides))
    if (key !== 'enabled' && key !== 'allowProvider')
      warnings.push(`${where}.modelOverrides.${key} is an OpenClaw setting claw does not implement; ignored`);
  const auto = (raw.auto as AutoMode | undefined) ?? (raw.enabled === true ? 'always' : 'off');
  return {
    settings: {
      auto,
      ...(typeof raw.provider === 'string' ? { provider: providerId(raw.provider) } : {}),
      providers,
      maxTextLength: typeof raw.maxTextLength === 'number' ? raw.maxTextLength : DEFAULT_MAX_TEXT,
      timeoutMs: typeof raw.timeoutMs === 'number' ? raw.timeoutMs : DEFAULT_TIMEOUT_MS,
      directives: overrides.enabled !== false,
      allowProvider: overrides.allowProvider === true,
      ...(typeof raw.prefsPath === 'string' ? { prefsPath: raw.prefsPath } : {}),
    },
    warnings,
  };
}
