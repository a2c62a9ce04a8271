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

/** Like useService, but a missing service is an error naming what to enable. */
export async function requireService<T>(kernel: Pick<KernelServices, 'capabilities'>, id: string, what: string): Promise<T> {
  const api = await useService<T>(kernel, id);
  if (api === undefined) throw new Error(`${what} needs the "${id}" service, and no enabled plugin provides it (is the plugin that declares services: ["${id}"] enabled?)`);
  return api;
}
