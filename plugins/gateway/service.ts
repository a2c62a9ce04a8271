import type { ServiceDefinition } from '../../sdk/index.js';
import type { GatewayRuntime } from './runtime.js';

/** The `gateway` service as the `claw gateway` runner drives it. */
export interface GatewayService extends ServiceDefinition {
  runtime: GatewayRuntime;
  /** Why the next stop happens; clients see it in the `shutdown` event. */
  stopReason?: { reason: string; restartExpectedMs?: number };
}
