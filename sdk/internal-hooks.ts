/**
 * Emitting an internal hook event from any plugin: a no-op when the hooks plugin is off or
 * no selected hook listens, and never an error on the caller's path.
 */
import { useService } from './services.js';
import type { KernelServices } from './types/plugin.js';
import type { InternalHookEvent, InternalHooksService, InternalHookType } from './types/internal-hooks.js';

/** The event after every handler ran, or undefined when nothing listens. */
export async function emitInternalHook(
  kernel: Pick<KernelServices, 'capabilities'>,
  type: InternalHookType,
  action: string,
  sessionKey: string,
  context: () => Record<string, unknown>,
): Promise<InternalHookEvent | undefined> {
  const service = await useService<InternalHooksService>(kernel, 'internal-hooks').catch(() => undefined);
  if (!service?.wants(type, action)) return undefined;
  return service.emit(type, action, sessionKey, context());
}
