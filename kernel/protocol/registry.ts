/**
 * The protocol registry: every gateway method (with the schema its params must satisfy)
 * and event. Methods of plugins not loaded yet are listed from their manifests, so
 * `hello-ok.features` is complete, and get their schema when the plugin registers them.
 * It is also the one path by which events reach clients: a plugin `emit`s a registered
 * event and the transport (the gateway plugin) delivers it to connections.
 */
import { compileSchema, formatErrors, type JsonSchema, type SchemaIssue } from '../validation.js';

export interface MethodSpec {
  /** JSON Schema for `params`; omitted means any params are accepted. */
  params?: JsonSchema;
  /** Operator scope required to call the method, e.g. `operator.read`. */
  scope?: string;
  /** Side-effecting methods must carry an `idempotencyKey` in their params ('optional': honoured when sent, as OpenClaw). */
  sideEffect?: boolean | 'optional';
  description?: string;
}

export interface EventSpec {
  /** May be dropped for a slow consumer (streaming deltas); final events never are. */
  droppable?: boolean;
  /** Operator scope a connection needs to receive the event; omitted means every connection. */
  scope?: string;
  description?: string;
}

export interface EmitOptions {
  /** Deliver only to these connections (default: every connection allowed to see it). */
  connIds?: readonly string[];
  /** Overrides the event's registered `droppable`. */
  droppable?: boolean;
}

export interface EmittedEvent {
  event: string;
  payload: unknown;
  droppable: boolean;
  scope?: string;
  connIds?: readonly string[];
}

/** Returns how many clients it reached (nothing: unknown, counted as one). */
export type EventListener = (event: EmittedEvent) => number | void;

interface MethodEntry extends MethodSpec {
  name: string;
  owner: string;
  /** False while only the manifest has declared it. */
  registered: boolean;
}

interface EventEntry extends EventSpec {
  name: string;
  owner: string;
}

export type Validation<T> = { ok: true; value: T } | { ok: false; issues: SchemaIssue[] };

export class ProtocolRegistry {
  private readonly methods = new Map<string, MethodEntry>();
  private readonly events = new Map<string, EventEntry>();
  private readonly listeners = new Set<EventListener>();

  declareMethod(name: string, owner: string): void {
    if (!claimed(this.methods, 'method', name, owner)) this.methods.set(name, { name, owner, registered: false });
  }

  registerMethod(name: string, owner: string, spec: MethodSpec = {}): void {
    if (claimed(this.methods, 'method', name, owner)?.registered) {
      throw new Error(`gateway method "${name}" is already registered`);
    }
    this.methods.set(name, { ...spec, name, owner, registered: true });
  }

  registerEvent(name: string, owner: string, spec: EventSpec = {}): void {
    claimed(this.events, 'event', name, owner);
    this.events.set(name, { ...spec, name, owner });
  }

  /** Drop everything `owner` registered (the declarations from its manifest stay). */
  unregisterOwner(owner: string): void {
    for (const { name, owner: holder } of this.methods.values()) {
      if (holder === owner) this.methods.set(name, { name, owner, registered: false });
    }
    for (const [name, entry] of this.events) if (entry.owner === owner) this.events.delete(name);
  }

  methodNames = (): string[] => [...this.methods.keys()].sort();
  eventNames = (): string[] => [...this.events.keys()].sort();
  method = (name: string): Readonly<MethodEntry> | undefined => this.methods.get(name);
  event = (name: string): Readonly<EventEntry> | undefined => this.events.get(name);

  /** Publish a registered event to whatever transport listens (the gateway); returns how many clients it reached. */
  emit(event: string, payload: unknown, options: EmitOptions = {}): number {
    const entry = this.events.get(event);
    if (!entry) throw new Error(`cannot emit unregistered gateway event "${event}"`);
    const emitted: EmittedEvent = {
      event,
      payload,
      droppable: options.droppable ?? entry.droppable ?? false,
      scope: entry.scope,
      connIds: options.connIds,
    };
    let reached = 0;
    for (const listener of this.listeners) {
      try {
        reached += listener(emitted) ?? 1;
      } catch {
        // A failing transport must not break the plugin that emitted.
      }
    }
    return reached;
  }

  onEmit(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** compileSchema keeps each schema's validator, so a method's schema compiles once. */
  validateParams(method: string, params: unknown): Validation<unknown> {
    const entry = this.methods.get(method);
    if (!entry) return { ok: false, issues: [{ path: 'method', message: `unknown method "${method}"` }] };
    if (!entry.params) return { ok: true, value: params };
    const value = params === undefined ? {} : params;
    const validate = compileSchema(entry.params);
    return validate(value)
      ? { ok: true, value }
      : { ok: false, issues: formatErrors(validate.errors ?? [], value, ['params']) };
  }
}

/** The entry already under `name`, which must belong to `owner`. */
function claimed<E extends { owner: string }>(map: Map<string, E>, kind: string, name: string, owner: string) {
  const existing = map.get(name);
  if (existing && existing.owner !== owner) {
    throw new Error(`gateway ${kind} "${name}" is already provided by "${existing.owner}"`);
  }
  return existing;
}
