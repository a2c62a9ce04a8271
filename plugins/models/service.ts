/**
 * Model selection as a service: one Models (chain, aliases, catalog, failover) and one
 * AuthProfiles per agent for the whole process, so cooldowns a run records are what
 * `models.list`, `/model` and the next run see. This plugin offers it as service "models"
 * (the SDK's ModelService contract); every other plugin asks for that service.
 */
import { join } from 'node:path';
import type { KernelServices } from '../../sdk/index.js';
import {
  defaultAgentId,
  type AgentSettings,
  type ProviderSettings,
  type ModelService as ModelServiceContract,
} from '../../sdk/agent/index.js';
import { AuthProfiles } from './auth-profiles.js';
import { Models, type ModelsOptions } from './models.js';
import { modelReadiness, type ModelReadiness } from './readiness.js';
import { agentSettings } from './settings.js';
import { probeModel } from './probe.js';

export class ModelService implements ModelServiceContract {
  readonly models: Models;
  private readonly profiles = new Map<string, AuthProfiles>();

  readonly now: () => number;

  constructor(
    readonly kernel: KernelServices,
    options: ModelsOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.models = new Models(kernel, (agentId) => this.authProfiles(agentId), { ...options, now: this.now });
  }

  settings(agentId: string): AgentSettings {
    return agentSettings(this.kernel.config(), agentId, this.kernel.paths.stateDir, this.kernel.paths.workspaceDir);
  }

  defaultAgent(): string {
    return defaultAgentId(this.kernel.config());
  }

  probe(
    ref: string,
    provider: ProviderSettings & { modelPath?: string },
    signal?: AbortSignal,
  ): Promise<{ text: string }> {
    return probeModel(this.kernel, ref, provider, signal);
  }

  readiness(agentId = this.defaultAgent()): Promise<ModelReadiness> {
    return modelReadiness(this.kernel, this.models, this.settings(agentId), this.authProfiles(agentId));
  }

  authProfiles(agentId: string): AuthProfiles {
    let profiles = this.profiles.get(agentId);
    if (!profiles) {
      profiles = new AuthProfiles(join(this.settings(agentId).agentDir, 'auth-profiles.json'), this.now);
      this.profiles.set(agentId, profiles);
    }
    return profiles;
  }
}
