/**
 * `claw onboard --non-interactive`: the same flow, its steps answered from OpenClaw's flags.
 * A step without its flag takes the current value (the step's initial value, "keep"); a
 * value nobody gave and nothing can stand in for is a usage error naming the flag. A live
 * check that fails (the model test, a channel token) ends the command with exit code 1 and
 * nothing of that section saved.
 */
import { UsageError } from '../../sdk/cli.js';
import type { Prompter, WizardStep, WizardValue } from './wizard-types.js';

export interface OnboardFlags {
  authChoice?: string;
  openaiApiKey?: string;
  anthropicApiKey?: string;
  customBaseUrl?: string;
  customApiKey?: string;
  customModelId?: string;
  model?: string;
  modelPath?: string;
  workspace?: string;
  gatewayPort?: string;
  gatewayBind?: string;
  gatewayAuth?: string;
  gatewayToken?: string;
  gatewayPassword?: string;
  telegramToken?: string;
  discordToken?: string;
  skipChannels?: boolean;
}

/** `--auth-choice` values (OpenClaw's names, plus the vLLM and LM Studio presets) → the provider choice. */
export const AUTH_CHOICES: Readonly<Record<string, string>> = {
  'openai-api-key': 'openai',
  'anthropic-api-key': 'anthropic',
  'custom-api-key': 'custom',
  ollama: 'ollama',
  vllm: 'vllm',
  lmstudio: 'lmstudio',
  'llama-cpp': 'llama-cpp',
  skip: 'skip',
};

/** A live check refused what the flags gave: exit 1. */
export class OnboardCheckFailed extends Error {}

/** The steps whose `error` is a live check's verdict, not a malformed flag. */
const LIVE_CHECKS = new Set(['model.provider', 'channels.telegram.token', 'channels.discord.token']);

export function flagPrompter(flags: OnboardFlags, env: Readonly<Record<string, string | undefined>>): Prompter {
  let provider: string | undefined;
  const keyFlag = () =>
    provider === 'openai' ? '--openai-api-key' : provider === 'anthropic' ? '--anthropic-api-key' : '--custom-api-key';
  /** The flag that answers a step, for error messages. */
  const flagOf = (id: string): string =>
    ({
      'model.provider': '--auth-choice',
      'model.baseUrl': '--custom-base-url',
      'model.apiKey': keyFlag(),
      'model.id': provider && !['openai', 'anthropic'].includes(provider) ? '--custom-model-id' : '--model',
      'model.ggufPath': '--model-path',
      'workspace.path': '--workspace',
      'gateway.port': '--gateway-port',
      'gateway.bind': '--gateway-bind',
      'gateway.auth': '--gateway-auth',
      'gateway.token': '--gateway-token',
      'gateway.password': '--gateway-password',
      'channels.telegram.token': '--telegram-token',
      'channels.discord.token': '--discord-token',
    })[id] ?? id;

  const answer = (step: WizardStep): WizardValue => {
    const initial = step.initialValue;
    switch (step.id) {
      case 'flow':
        return 'manual';
      case 'model.provider': {
        if (flags.authChoice === undefined) {
          if (step.options?.some((option) => option.value === 'keep')) return (provider = 'keep');
          throw new UsageError(`no model is configured: give --auth-choice (${Object.keys(AUTH_CHOICES).join(' | ')})`);
        }
        provider = AUTH_CHOICES[flags.authChoice];
        if (!provider)
          throw new UsageError(
            `--auth-choice must be one of ${Object.keys(AUTH_CHOICES).join(', ')} (got "${flags.authChoice}")`,
          );
        return provider;
      }
      case 'model.baseUrl':
        return flags.customBaseUrl ?? initial;
      case 'model.apiKey':
        if (provider === 'openai') return flags.openaiApiKey ?? '';
        if (provider === 'anthropic') return flags.anthropicApiKey ?? '';
        // As OpenClaw: a custom endpoint's key may come from CUSTOM_API_KEY.
        return flags.customApiKey ?? (provider === 'custom' ? env.CUSTOM_API_KEY?.trim() : undefined) ?? '';
      case 'model.id':
        return (
          (provider && !['openai', 'anthropic'].includes(provider) ? flags.customModelId : undefined) ??
          flags.model ??
          initial
        );
      case 'model.ggufPath':
        return flags.modelPath ?? initial;
      case 'workspace.path':
        return flags.workspace ?? initial;
      case 'gateway.configure':
        return [
          flags.gatewayPort,
          flags.gatewayBind,
          flags.gatewayAuth,
          flags.gatewayToken,
          flags.gatewayPassword,
        ].some((value) => value !== undefined)
          ? 'change'
          : 'keep';
      case 'gateway.port':
        return flags.gatewayPort ?? initial;
      case 'gateway.bind':
        if (flags.gatewayBind && !step.options?.some((option) => option.value === flags.gatewayBind))
          throw new UsageError(
            `--gateway-bind must be ${step.options?.map((option) => option.value).join(' or ')} (got "${flags.gatewayBind}")`,
          );
        return flags.gatewayBind ?? initial;
      case 'gateway.auth': {
        const mode =
          flags.gatewayAuth ?? (flags.gatewayPassword ? 'password' : flags.gatewayToken ? 'token' : undefined);
        if (mode !== undefined && mode !== 'token' && mode !== 'password')
          throw new UsageError(`--gateway-auth must be token or password (got "${mode}")`);
        return mode ?? initial;
      }
      case 'gateway.token':
        return flags.gatewayToken ?? '';
      case 'gateway.password':
        return flags.gatewayPassword ?? '';
      case 'channels.pick':
        if (flags.skipChannels) return [];
        return [
          ...(flags.telegramToken !== undefined ? ['telegram'] : []),
          ...(flags.discordToken !== undefined ? ['discord'] : []),
        ];
      case 'channels.telegram.token':
        return flags.telegramToken ?? '';
      case 'channels.discord.token':
        return flags.discordToken ?? '';
      default:
        if (step.type === 'note' || step.type === 'progress') return undefined;
        throw new UsageError(`claw onboard --non-interactive cannot answer "${step.id}"`);
    }
  };

  return {
    ask(step) {
      if (step.error) {
        if (LIVE_CHECKS.has(step.id)) return Promise.reject(new OnboardCheckFailed(step.error));
        return Promise.reject(new UsageError(`${flagOf(step.id)}: ${step.error}`));
      }
      try {
        return Promise.resolve(answer(step));
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
    working: (_message, work) => work(),
  };
}
