/**
 * Plugins talk to each other through services, never through each other's files: one
 * plugin registers `{ id, api }` (declared under `services` in its manifest), another asks
 * for it by id and gets the api object, typed by an SDK contract such as AgentService.
 * The providing plugin loads on first use.
 */
import type { KernelServices } from './types/plugin.js';

export async function useService<T>(kernel: Pick<KernelServices, 'capabilities'>, id: string): Promise<T | undefined> {
  const service = await kernel.capabilities.find('service', id);
  return service?.api as T | undefined;
}

/**
 * Like useService, but a missing service is an error naming what to enable: the plugin whose
 * manifest declares the service (and why it is off) when one is installed.
 */
export async function requireService<T>(
  kernel: Pick<KernelServices, 'capabilities'> & Partial<Pick<KernelServices, 'plugins'>>,
  id: string,
  what: string,
): Promise<T> {
  const api = await useService<T>(kernel, id);
  if (api !== undefined) return api;
  const owner = kernel.plugins?.().find((record) => record.manifest?.services?.includes(id));
  const hint = !owner
    ? `is the plugin that declares services: ["${id}"] installed and enabled?`
    : owner.status === 'failed'
      ? `plugin "${owner.id}" provides it but failed: ${owner.error ?? 'no reason given'}`
      : owner.enabled
        ? `plugin "${owner.id}" declares it but did not register it`
        : `plugin "${owner.id}" provides it but is off (${owner.reason}); enable it with: claw plugins enable ${owner.id}`;
  throw new Error(`${what} needs the "${id}" service, and no enabled plugin provides it (${hint})`);
}
