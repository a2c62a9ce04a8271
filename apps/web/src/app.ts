/** What every view gets: the gateway connection and a few app-wide services. */
import type { Gateway } from './gateway.js';
import type { DeviceIdentity } from './device.js';
import type { Approvals } from './approvals.js';

export interface App {
  gw: Gateway;
  /** WebChat's id for this browser (its peer id on the webchat channel). */
  clientId: string;
  identity?: DeviceIdentity;
  /** Go to a route, e.g. `#/chat?session=agent:main:main`. */
  go(route: string): void;
  /** A short message in the corner; errors stay until dismissed. */
  toast(message: string, kind?: 'info' | 'error'): void;
  /** Pending exec approvals: shown above every view, or inside the view that claims them. */
  approvals: Approvals;
}

export interface View {
  title: string;
  /**
   * Render into `root` (the app has just connected, or the route changed). Returns the
   * clean-up to run when the view is left: stop timers, drop event listeners.
   */
  mount(root: HTMLElement, app: App, params: URLSearchParams): () => void;
}

/**
 * Run `load` now and again after every reconnect (the view's data may have changed while
 * the connection was down). Returns the function that stops this.
 */
export function onReconnect(app: Pick<App, 'gw'>, load: () => void): () => void {
  let wasOpen = app.gw.state.phase === 'open';
  return app.gw.watch((state) => {
    const open = state.phase === 'open';
    if (open && !wasOpen) load();
    wasOpen = open;
  });
}

/** Refresh every `ms` while the page is visible. */
export function every(ms: number, work: () => void): () => void {
  const timer = window.setInterval(() => {
    if (document.visibilityState === 'visible') work();
  }, ms);
  return () => clearInterval(timer);
}
