/**
 * Model and auth: which provider, its key or address, the model id, then a real completion
 * with exactly that setup before anything is saved. A failed test shows its error and asks
 * again; only a setup that answered is written (`models.providers.<id>`,
 * `agents.defaults.model`). A key that came from the environment stays there.
 */
import { existsSync, openSync, readSync, closeSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { expandHome } from '../../sdk/index.js';
import type { ProviderSettings } from '../../sdk/agent/index.js';
import { askText, textOf, type OnboardDeps, type OnboardSummary } from './steps.js';
import {
  currentModel,
  ensureRecord,
  getRecord,
  getString,
  isRecord,
  maskIn,
  maskSecret,
  setDefaultModel,
  type AnyRecord,
} from './raw-config.js';
import type { Prompter, WizardOption } from './wizard-types.js';

interface ProviderChoice {
  label: string;
  hint?: string;
  /** key: a hosted API; url: an OpenAI-compatible server; gguf: a local file for llama-cpp. */
  kind: 'key' | 'url' | 'gguf';
  envKey?: string;
  baseUrl?: string;
  defaultModel?: string;
}

/** The choices, by provider id (the id written under models.providers). */
export const PROVIDER_CHOICES: Readonly<Record<string, ProviderChoice>> = {
  openai: { label: 'OpenAI', hint: 'API key', kind: 'key', envKey: 'OPENAI_API_KEY', defaultModel: 'gpt-4.1' },
  anthropic: {
    label: 'Anthropic',
    hint: 'API key',
    kind: 'key',
    envKey: 'ANTHROPIC_API_KEY',
    defaultModel: 'claude-sonnet-4-20250514',
  },
  ollama: { label: 'Ollama', kind: 'url', baseUrl: 'http://127.0.0.1:11434/v1', defaultModel: 'llama3.2' },
  vllm: { label: 'vLLM', kind: 'url', baseUrl: 'http://127.0.0.1:8000/v1' },
  lmstudio: { label: 'LM Studio', kind: 'url', baseUrl: 'http://127.0.0.1:1234/v1' },
  custom: { label: 'Another OpenAI-compatible server', hint: 'by base URL', kind: 'url' },
  'llama-cpp': { label: 'A local GGUF model file', hint: 'llama.cpp, no server', kind: 'gguf' },
};

/** What was answered in an earlier attempt, offered again after a failed test (secrets only masked). */
interface Attempt {
  provider?: string;
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  modelPath?: string;
  error?: string;
}

export async function modelSection(p: Prompter, deps: OnboardDeps, summary: OnboardSummary): Promise<void> {
  const attempt: Attempt = {};
  for (;;) {
    const raw = deps.raw();
    const current = currentModel(raw);
    const options: WizardOption[] = [
      ...(current ? [{ value: 'keep', label: `Keep the current model (${current})` }] : []),
      ...Object.entries(PROVIDER_CHOICES).map(([value, choice]) => ({
        value,
        label: choice.label,
        hint: choice.baseUrl ?? choice.hint,
      })),
      { value: 'skip', label: 'Skip for now', hint: 'claw will not answer until a model is set' },
    ];
    const provider = textOf(
      await p.ask({
        id: 'model.provider',
        type: 'select',
        title: 'Model',
        message: 'Which model should the assistant use?',
        options,
        initialValue: attempt.provider ?? (current ? 'keep' : 'openai'),
        ...(attempt.error ? { error: attempt.error } : {}),
      }),
    );
    if (provider === 'keep' || provider === 'skip') {
      summary.model = provider === 'keep' ? current : undefined;
      summary.lines.push(provider === 'keep' ? `Model: ${current} (kept)` : 'Model: skipped (run claw onboard again)');
      return;
    }
    const choice = PROVIDER_CHOICES[provider];
    if (!choice) {
      attempt.error = `unknown provider "${provider}"`;
      continue;
    }
    if (provider !== attempt.provider)
      Object.assign(attempt, { baseUrl: undefined, apiKey: undefined, model: undefined, modelPath: undefined });
    attempt.provider = provider;
    const outcome =
      choice.kind === 'gguf'
        ? await localModel(p, deps, raw, attempt)
        : await hostedModel(p, deps, raw, provider, choice, attempt, current);
    if (outcome) {
      summary.model = outcome;
      summary.lines.push(`Model: ${outcome} (the live test answered)`);
      return;
    }
  }
}

/** Ask, test and save one provider; the saved ref, or undefined after a failed test (attempt.error says why). */
async function hostedModel(
  p: Prompter,
  deps: OnboardDeps,
  raw: AnyRecord,
  provider: string,
  choice: ProviderChoice,
  attempt: Attempt,
  current: string | undefined,
): Promise<string | undefined> {
  const existing = getRecord(raw, 'models', 'providers', provider) ?? {};
  let baseUrl = getString(existing, 'baseUrl');
  if (choice.kind === 'url') {
    baseUrl = await askText(
      p,
      {
        id: 'model.baseUrl',
        type: 'text',
        title: choice.label,
        message: 'Base URL of the server (OpenAI-compatible, usually ending in /v1)',
        initialValue: attempt.baseUrl ?? baseUrl ?? choice.baseUrl ?? '',
        placeholder: 'http://127.0.0.1:11434/v1',
      },
      (value) => (/^https?:\/\/[^\s/]+/.test(value) ? undefined : 'give an http:// or https:// URL'),
    );
    attempt.baseUrl = baseUrl = baseUrl.replace(/\/+$/, '');
  }

  const configuredKey = getString(existing, 'apiKey');
  const envKey = choice.kind === 'key' ? envKeyVariable(provider, deps.env) : undefined;
  const fallback = attempt.apiKey
    ? `the key you entered (${maskSecret(attempt.apiKey)})`
    : configuredKey
      ? `the saved key (${maskSecret(configuredKey)})`
      : envKey
        ? `${envKey} from the environment`
        : undefined;
  const typed = await askText(
    p,
    {
      id: 'model.apiKey',
      type: 'text',
      title: choice.label,
      message: choice.kind === 'key' ? `${choice.label} API key` : 'API key (leave empty if the server needs none)',
      sensitive: true,
      placeholder: fallback ? `leave empty to use ${fallback}` : choice.kind === 'key' ? 'paste the key' : 'none',
    },
    (value) =>
      value || fallback || choice.kind !== 'key'
        ? undefined
        : `an API key is needed${choice.envKey ? ` (or set ${choice.envKey})` : ''}`,
  );
  if (typed) {
    deps.redact(typed);
    attempt.apiKey = typed;
  }
  const newKey = attempt.apiKey;

  const currentId = current?.startsWith(`${provider}/`) ? current.slice(provider.length + 1) : undefined;
  const model = await askText(
    p,
    {
      id: 'model.id',
      type: 'text',
      title: choice.label,
      message: 'Model id',
      initialValue: attempt.model ?? currentId ?? choice.defaultModel ?? '',
      placeholder: choice.kind === 'url' ? 'the model name the server serves' : choice.defaultModel,
    },
    (value) => (value && !/\s/.test(value) ? undefined : 'give the model id (no spaces)'),
  );
  attempt.model = model;
  const ref = `${provider}/${model}`;

  const candidate: ProviderSettings = {
    ...(existing as ProviderSettings),
    ...(baseUrl ? { baseUrl } : {}),
    ...(newKey ? { apiKey: newKey } : {}),
  };
  try {
    await p.working(`Testing ${ref} with one short message…`, () => deps.probe(ref, candidate, deps.signal));
  } catch (error) {
    attempt.error = `the live test failed: ${maskIn((error as Error).message, [newKey, configuredKey])}`;
    return undefined;
  }
  await deps.changeConfig(`claw onboard: model ${ref}`, (next) => {
    const entry = { ...(getRecord(next, 'models', 'providers', provider) ?? {}) };
    if (baseUrl) entry.baseUrl = baseUrl;
    if (newKey) entry.apiKey = newKey;
    const models = Array.isArray(entry.models) ? (entry.models as unknown[]) : [];
    // A server's own model is listed, so `claw models list` shows it.
    if (choice.kind === 'url' && !models.some((item) => isRecord(item) && item.id === model))
      entry.models = [...models, { id: model }];
    if (Object.keys(entry).length > 0) ensureRecord(next, 'models', 'providers')[provider] = entry;
    setDefaultModel(next, ref);
  });
  return ref;
}

/**
 * A .gguf file for the llama-cpp plugin: checked to be one, loaded and asked one short
 * message (then freed), and only then saved as its modelPath. The saved ref, or undefined
 * after a failed test (attempt.error says why).
 */
async function localModel(
  p: Prompter,
  deps: OnboardDeps,
  raw: AnyRecord,
  attempt: Attempt,
): Promise<string | undefined> {
  const configured = getString(getRecord(raw, 'plugins', 'entries', 'llama-cpp', 'config'), 'modelPath');
  const path = await askText(
    p,
    {
      id: 'model.ggufPath',
      type: 'text',
      title: 'Local model',
      message: 'Path to the .gguf model file',
      initialValue: attempt.modelPath ?? configured ?? '',
      placeholder: '~/models/model.gguf',
    },
    (value) => ggufProblem(value),
  );
  attempt.modelPath = path;
  const file = resolve(expandHome(path));
  const ref = 'llama-cpp/local';
  try {
    await p.working(`Loading ${file} and asking it one short message…`, () =>
      deps.probe(ref, { modelPath: file }, deps.signal),
    );
  } catch (error) {
    attempt.error = `the live test failed: ${(error as Error).message}`;
    return undefined;
  }
  await deps.changeConfig('claw onboard: local model', (next) => {
    ensureRecord(next, 'plugins', 'entries', 'llama-cpp', 'config').modelPath = file;
    setDefaultModel(next, ref);
  });
  return ref;
}

/**
 * The variable that gives `provider` a key, by the conventions the models plugin reads
 * (OpenClaw's): `OPENCLAW_LIVE_<ID>_KEY`, `<ID>_API_KEYS`, `<ID>_API_KEY`, `<ID>_API_KEY_<suffix>`.
 */
export function envKeyVariable(
  provider: string,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const prefix = provider.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
  const suffixed = Object.keys(env)
    .filter((name) => name.startsWith(`${prefix}_API_KEY_`))
    .sort();
  return [`OPENCLAW_LIVE_${prefix}_KEY`, `${prefix}_API_KEYS`, `${prefix}_API_KEY`, ...suffixed].find((name) =>
    env[name]?.trim(),
  );
}

/** Why `path` is not a GGUF model file, or nothing. */
export function ggufProblem(path: string): string | undefined {
  if (!path) return 'give the path of a .gguf file';
  const file = resolve(expandHome(path));
  if (!existsSync(file) || !statSync(file).isFile()) return `no file at ${file}`;
  const magic = Buffer.alloc(4);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, magic, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  return magic.toString('latin1') === 'GGUF'
    ? undefined
    : `${file} is not a GGUF model (it does not start with "GGUF")`;
}
