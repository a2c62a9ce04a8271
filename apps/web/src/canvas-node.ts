/**
 * This tab as a canvas node: a second gateway WebSocket with role "node" (client mode "node",
 * platform "web", this browser's device identity) declaring the canvas.* commands, answering
 * each `node.invoke.request` with `node.invoke.result`.
 *
 * Pages show in an iframe with `sandbox="allow-scripts"` (the host also sends a CSP sandbox),
 * so a page is an opaque origin: it cannot touch this app's storage, its gateway secret or
 * its connections. For the same reason this app cannot reach into the page; eval and
 * snapshot go by postMessage to the bridge script the canvas host puts in every page, and
 * only answers from the frame's own window are taken.
 */
import { randomId } from './dom.js';
import type { DeviceIdentity } from './device.js';
import { browserName, Gateway, GatewayError, type ConnectionState } from './gateway.js';
import type { Secret } from './storage.js';

export const CANVAS_COMMANDS = ['canvas.present', 'canvas.hide', 'canvas.navigate', 'canvas.eval', 'canvas.snapshot'];
const MARK = 'openclaw-canvas';
const DEFAULT_TIMEOUT_MS = 30_000;

interface InvokeRequest {
  id: string;
  nodeId: string;
  command: string;
  paramsJSON?: string | null;
  params?: unknown;
  timeoutMs?: number;
}

class NodeCommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface CanvasSurface {
  /** The frame pages load in. */
  frame: HTMLIFrameElement;
  /** The agent asked to show or hide the canvas, or loaded a page. */
  onChange(): void;
}

export class CanvasNode {
  readonly gw: Gateway;
  visible = false;
  url?: string;
  private ready = false;
  private readonly waiting = new Set<() => void>();
  private readonly pending = new Map<string, { resolve(value: unknown): void; reject(error: Error): void }>();
  private readonly stops: Array<() => void> = [];

  constructor(
    private readonly surface: CanvasSurface,
    options: {
      url: string;
      identity?: DeviceIdentity;
      credentials(): { secret?: Secret; deviceToken?: string };
      onDeviceToken?(token: string): void;
    },
  ) {
    this.gw = new Gateway({
      url: options.url,
      scopes: [],
      identity: options.identity,
      credentials: options.credentials,
      onDeviceToken: options.onDeviceToken,
      node: { caps: ['canvas'], commands: CANVAS_COMMANDS, displayName: `Canvas (${browserName()})` },
    });
    this.stops.push(this.gw.on<InvokeRequest>('node.invoke.request', (request) => void this.answer(request)));
    const onMessage = (event: MessageEvent) => this.fromFrame(event);
    window.addEventListener('message', onMessage);
    this.stops.push(() => window.removeEventListener('message', onMessage));
  }

  start(): void {
    this.gw.start();
  }

  stop(): void {
    for (const stop of this.stops.splice(0)) stop();
    this.gw.stop('Canvas turned off');
    for (const entry of this.pending.values()) entry.reject(new Error('the canvas was turned off'));
    this.pending.clear();
  }

  watch(watcher: (state: ConnectionState) => void): () => void {
    return this.gw.watch(watcher);
  }

  private async answer(request: InvokeRequest): Promise<void> {
    let result: Record<string, unknown>;
    try {
      const params = request.paramsJSON ? JSON.parse(request.paramsJSON) : (request.params ?? {});
      const payload = await this.run(request.command, (params ?? {}) as Record<string, unknown>, request.timeoutMs);
      result = { ok: true, payload };
    } catch (error) {
      const code = error instanceof NodeCommandError ? error.code : 'UNAVAILABLE';
      result = { ok: false, error: { code, message: error instanceof Error ? error.message : String(error) } };
    }
    await this.gw
      .call('node.invoke.result', { id: request.id, nodeId: request.nodeId, ...result })
      .catch((error: GatewayError) => console.error('node.invoke.result was refused', error));
  }

  private async run(command: string, params: Record<string, unknown>, timeoutMs?: number): Promise<unknown> {
    const wait = Math.max(1000, (timeoutMs ?? DEFAULT_TIMEOUT_MS) - 500);
    switch (command) {
      case 'canvas.present':
        if (typeof params.url === 'string' && params.url) this.load(params.url);
        this.visible = true;
        this.surface.onChange();
        return { ok: true };
      case 'canvas.hide':
        this.visible = false;
        this.surface.onChange();
        return { ok: true };
      case 'canvas.navigate':
        if (typeof params.url !== 'string' || !params.url)
          throw new NodeCommandError('INVALID_REQUEST', 'canvas.navigate needs url');
        this.load(params.url);
        this.surface.onChange();
        return { ok: true };
      case 'canvas.eval': {
        if (typeof params.javaScript !== 'string')
          throw new NodeCommandError('INVALID_REQUEST', 'canvas.eval needs javaScript');
        const answer = (await this.ask({ op: 'eval', javaScript: params.javaScript }, wait)) as { result?: unknown };
        return { result: answer.result };
      }
      case 'canvas.snapshot':
        return this.ask(
          { op: 'snapshot', format: params.format, maxWidth: params.maxWidth, quality: params.quality },
          wait,
        );
    }
    throw new NodeCommandError('INVALID_REQUEST', `this canvas has no command ${command}`);
  }

  /** Load a page: a gateway-relative canvas path or an http(s) URL. */
  private load(raw: string): void {
    const url = new URL(raw, location.href);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new NodeCommandError('INVALID_REQUEST', `the canvas only loads http(s) pages, not ${url.protocol}`);
    }
    this.url = url.href;
    this.ready = false;
    this.surface.frame.src = url.href;
  }

  /** Send a request to the page's bridge once it is ready; its answer or error comes back by message. */
  private async ask(message: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    if (!this.url) throw new NodeCommandError('UNAVAILABLE', 'no page is loaded in this canvas (present one first)');
    const deadline = Date.now() + timeoutMs;
    await this.whenReady(timeoutMs);
    const id = randomId();
    return new Promise((resolve, reject) => {
      const timer = window.setTimeout(
        () => {
          this.pending.delete(id);
          reject(new NodeCommandError('TIMEOUT', `the page did not answer ${String(message.op)} in time`));
        },
        Math.max(0, deadline - Date.now()),
      );
      this.pending.set(id, {
        resolve: (value) => (clearTimeout(timer), resolve(value)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      this.surface.frame.contentWindow?.postMessage({ [MARK]: 1, id, ...message }, '*');
    });
  }

  private whenReady(timeoutMs: number): Promise<void> {
    if (this.ready) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = () => (clearTimeout(timer), this.waiting.delete(done), resolve());
      const timer = window.setTimeout(() => {
        this.waiting.delete(done);
        reject(
          new NodeCommandError(
            'UNAVAILABLE',
            'the page in this canvas has no canvas bridge (only pages from the canvas host answer eval and snapshot), or it has not loaded',
          ),
        );
      }, timeoutMs);
      this.waiting.add(done);
    });
  }

  private fromFrame(event: MessageEvent): void {
    if (event.source !== this.surface.frame.contentWindow) return;
    const data = event.data as Record<string, unknown> | null;
    if (!data || data[MARK] !== 1) return;
    if (data.op === 'ready') {
      this.ready = true;
      for (const wake of [...this.waiting]) wake();
      return;
    }
    const entry = typeof data.id === 'string' ? this.pending.get(data.id) : undefined;
    if (!entry) return;
    this.pending.delete(data.id as string);
    if (data.ok) entry.resolve(data.result);
    else entry.reject(new NodeCommandError('CANVAS_PAGE_ERROR', String(data.error ?? 'the page reported an error')));
  }
}
