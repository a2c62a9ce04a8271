/** What a command map is built from: the node host's kernel, state dir, approvals and watchdog. */
import type { ExecEnvService } from '../../sdk/exec/index.js';
import type { KernelServices } from '../../sdk/index.js';
import type { GroupWatchdog } from './group-watchdog.js';
import type { NodeApprovals } from './node-approvals.js';

export interface NodeHostContext {
  kernel: KernelServices;
  stateDir: string;
  approvals: NodeApprovals;
  execEnv: () => Promise<ExecEnvService>;
  /** Processes the node host starts are registered here so they die with it. */
  watchdog: GroupWatchdog;
}
