/**
 * Internal hooks (OpenClaw's `HOOK.md` + handler folders): the event a handler receives,
 * and the `internal-hooks` service (plugin `hooks`) that runs the selected handlers. The
 * agent plugin and the agent loop emit command and bootstrap events through it
 * (`emitInternalHook`, sdk/internal-hooks.ts); message and gateway events are bridged from
 * the kernel hook bus by the hooks plugin itself.
 */

/** Event families; a handler may subscribe to a family (`command`) or an exact key (`command:new`). */
export type InternalHookType = 'command' | 'session' | 'agent' | 'gateway' | 'message';

export interface InternalHookEvent {
  type: InternalHookType;
  /** Within the family: `new`, `reset`, `stop`, `bootstrap`, `startup`, `received`, `sent`. */
  action: string;
  /** Session the event concerns; gateway events use `gateway`. */
  sessionKey: string;
  timestamp: Date;
  /** Event-specific data (an observation; `agent:bootstrap`'s `bootstrapFiles` is the one mutable field). */
  context: Record<string, unknown>;
  /** Text a handler pushes here; `/new` and `/reset` send it back to the sender. */
  messages: string[];
}

/** One file offered for the system prompt (`agent:bootstrap` handlers may add, drop or replace these). */
export interface InternalBootstrapFile {
  name: string;
  path: string;
  missing: boolean;
  content?: string;
}

export interface InternalHooksService {
  /** Runs every selected handler for the event, each bounded by a timeout; never throws. */
  emit(
    type: InternalHookType,
    action: string,
    sessionKey: string,
    context: Record<string, unknown>,
  ): Promise<InternalHookEvent>;
  /** True when some selected handler subscribes to the event (lets callers skip building a costly context). */
  wants(type: InternalHookType, action: string): boolean;
}
