/**
 * Whether the default agent has a model it can use, as the "models" service judges it without
 * calling anyone: the gateway warns at start when it has none, and `health`, `status` and the
 * Control UI's banner say so with the fix. A gateway without the models plugin (a bare control
 * plane, as in some tests) runs no model and reports nothing.
 */
import type { KernelServices } from '../../sdk/index.js';
import type { ModelService } from '../../sdk/agent/index.js';
import { useService } from '../../sdk/services.js';

export type ModelStatus = Awaited<ReturnType<ModelService['readiness']>>;

export async function readModelStatus(kernel: KernelServices): Promise<ModelStatus | undefined> {
  const models = await useService<ModelService>(kernel, 'models').catch(() => undefined);
  if (!models) return undefined;
  try {
    return await models.readiness();
  } catch (error) {
    // An unreadable auth-profiles file, say: no turn could start either, so it is not "ok".
    return {
      ok: false,
      primary: null,
      problem: `the model check failed: ${error instanceof Error ? error.message : String(error)}`,
      fix: 'see the gateway log, then run `claw onboard`',
    };
  }
}

/** The one log line at start when nothing can answer. */
export function noModelWarning(status: ModelStatus): string {
  return `no usable model: ${status.problem ?? 'unknown reason'}. To fix: ${status.fix ?? 'run `claw onboard`'}`;
}
