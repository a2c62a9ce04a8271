/**
 * "No usable model", above every view while the gateway's health says the default agent has
 * no model it could use (nothing configured, no key, no local model file): what is wrong and
 * the two ways to fix it, the Setup view (`#/setup`) and `claw onboard`. Read from `health` on
 * every (re)connect and from `health` events, which the gateway sends again after each config
 * change, so the notice leaves by itself once a model is set up.
 */
import type { App } from './app.js';
import { onReconnect } from './app.js';
import { h, replace } from './dom.js';

interface ModelStatus {
  ok: boolean;
  primary: string | null;
  problem?: string;
  fix?: string;
}

export function mountModelBanner(container: HTMLElement, app: App): void {
  const show = (model: ModelStatus | undefined) => {
    // A gateway that reports no model status (no models plugin, an older one) gets no notice.
    container.hidden = !model || model.ok;
    if (!model || model.ok) return replace(container);
    replace(
      container,
      h('strong', null, 'No usable model: the assistant cannot answer yet.'),
      h('span', { class: 'model-problem' }, model.problem ?? ''),
      h(
        'span',
        null,
        'Set one up in ',
        h('a', { href: '#/setup' }, 'Setup'),
        ', or run ',
        h('code', null, 'claw onboard'),
        ' on the gateway machine.',
      ),
    );
  };
  onReconnect(app, () => {
    app.gw.call<{ model?: ModelStatus }>('health').then(
      (health) => show(health.model),
      // Health is the gateway's own method; if it fails, the connection banner says why.
      () => undefined,
    );
  });
  app.gw.on<{ model?: ModelStatus }>('health', (health) => show(health.model));
}
