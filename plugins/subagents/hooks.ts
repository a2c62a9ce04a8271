/**
 * OpenClaw's four sub-agent hooks. The kernel's hook bus has a fixed catalog (the message
 * path and lifecycle) without them, so this plugin offers them on its `subagents` service:
 * `(await useService(kernel, 'subagents')).on('subagent_spawning', handler)`. A throwing
 * handler is logged by the caller's path and never breaks a spawn, except that
 * `subagent_spawning` returning `{ status: 'error' }` refuses it.
 */
import type { RequesterOrigin } from './registry.js';

export interface SpawningEvent {
  agentId: string;
  childSessionKey: string;
  label?: string;
  requesterSessionKey: string;
  requester?: RequesterOrigin;
}
export interface SpawnedEvent {
  runId: string;
  agentId: string;
  childSessionKey: string;
  label?: string;
  requesterSessionKey: string;
}
export interface DeliveryTargetEvent {
  childSessionKey: string;
  requesterSessionKey: string;
  requesterOrigin?: RequesterOrigin;
}
export interface EndedEvent {
  runId: string;
  childSessionKey: string;
  requesterSessionKey: string;
  status: string;
  reason: string;
}

export interface SubagentHookHandlers {
  subagent_spawning: (
    event: SpawningEvent,
  ) => { status?: 'ok' | 'error'; error?: string } | void | Promise<{ status?: 'ok' | 'error'; error?: string } | void>;
  subagent_spawned: (event: SpawnedEvent) => void | Promise<void>;
  subagent_delivery_target: (
    event: DeliveryTargetEvent,
  ) => { origin?: RequesterOrigin } | void | Promise<{ origin?: RequesterOrigin } | void>;
  subagent_ended: (event: EndedEvent) => void | Promise<void>;
}
export type SubagentHookName = keyof SubagentHookHandlers;

export class SubagentHooks {
  private readonly handlers: { [H in SubagentHookName]: Array<SubagentHookHandlers[H]> } = {
    subagent_spawning: [],
    subagent_spawned: [],
    subagent_delivery_target: [],
    subagent_ended: [],
  };

  constructor(private readonly report: (hook: string, error: Error) => void = () => undefined) {}

  on<H extends SubagentHookName>(hook: H, handler: SubagentHookHandlers[H]): () => void {
    const list = this.handlers[hook] as Array<SubagentHookHandlers[H]>;
    list.push(handler);
    return () => void list.splice(list.indexOf(handler), 1);
  }

  private async each<H extends SubagentHookName>(
    hook: H,
    call: (handler: SubagentHookHandlers[H]) => unknown,
  ): Promise<unknown[]> {
    const out: unknown[] = [];
    for (const handler of this.handlers[hook] as Array<SubagentHookHandlers[H]>) {
      try {
        out.push(await call(handler));
      } catch (error) {
        this.report(hook, error as Error);
      }
    }
    return out;
  }

  async spawning(event: SpawningEvent): Promise<{ error?: string }> {
    const results = (await this.each('subagent_spawning', (handler) => handler(event))) as Array<
      { status?: string; error?: string } | undefined
    >;
    const refused = results.find((result) => result?.status === 'error');
    return refused ? { error: refused.error ?? 'refused' } : {};
  }

  async spawned(event: SpawnedEvent): Promise<void> {
    await this.each('subagent_spawned', (handler) => handler(event));
  }

  async deliveryTarget(event: DeliveryTargetEvent): Promise<RequesterOrigin | undefined> {
    const results = (await this.each('subagent_delivery_target', (handler) => handler(event))) as Array<
      { origin?: RequesterOrigin } | undefined
    >;
    return results.find((result) => result?.origin)?.origin;
  }

  async ended(event: EndedEvent): Promise<void> {
    await this.each('subagent_ended', (handler) => handler(event));
  }
}
