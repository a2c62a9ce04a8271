/**
 * Plugin "sandbox-docker": the `sandbox` slot's Docker backend (select it with
 * `plugins.slots.sandbox: "sandbox-docker"`). dockerode is not installed with claw: it is
 * a manifest runtime dependency, installed into <stateDir>/runtime-deps by
 * `claw plugins enable sandbox-docker` or on first use.
 *
 * The service "sandbox-docker" is what `claw sandbox build` and other plugins use:
 * `buildImage()` builds the default image from busybox-static, `prune()` removes idle and
 * old sandboxes now.
 */
import { definePlugin, runtimeDeps } from '../../sdk/index.js';
import { requireService } from '../../sdk/services.js';
import { SANDBOX_CHECKS_SERVICE, type SandboxChecks } from '../../sdk/sandbox/index.js';
import { DockerSandboxBackend, type PruneSettings } from './backend.js';
import { DEFAULT_CONTAINER_PREFIX, DEFAULT_IMAGE } from './container.js';
import type { BuildImageOptions } from './image.js';

/** What the service "sandbox-docker" offers. */
export interface SandboxDockerService {
  readonly defaultImage: string;
  buildImage(options?: BuildImageOptions): Promise<string>;
  prune(): Promise<string[]>;
}

interface SandboxSettings {
  docker?: { containerPrefix?: string; image?: string };
  prune?: Partial<PruneSettings>;
}

export default definePlugin({
  id: 'sandbox-docker',
  async register(api) {
    // OpenClaw's keys under agents.defaults.sandbox (declared and validated by the sandbox routing).
    const agents = (api.kernel.config() as { agents?: { defaults?: { sandbox?: SandboxSettings } } }).agents;
    const settings = agents?.defaults?.sandbox ?? {};
    const backend = new DockerSandboxBackend({
      stateDir: api.kernel.paths.stateDir,
      env: api.kernel.env,
      deps: runtimeDeps(api.kernel, 'the Docker sandbox'),
      checks: await requireService<SandboxChecks>(api.kernel, SANDBOX_CHECKS_SERVICE, 'the Docker sandbox'),
      containerPrefix: settings.docker?.containerPrefix ?? DEFAULT_CONTAINER_PREFIX,
      defaultImage: settings.docker?.image ?? DEFAULT_IMAGE,
      prune: { idleHours: settings.prune?.idleHours ?? 24, maxAgeDays: settings.prune?.maxAgeDays ?? 7 },
    });
    api.registerSandbox(backend);
    const service: SandboxDockerService = {
      defaultImage: backend.defaultImage,
      buildImage: (options) => backend.buildImage(options),
      prune: () => backend.prune(),
    };
    api.registerService({ id: 'sandbox-docker', api: service, stop: () => backend.dispose() });
  },
});
