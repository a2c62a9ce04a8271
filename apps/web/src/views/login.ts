/** Sign-in: shown when the gateway wants a token (or password) this browser does not have. */
import { h, replace } from '../dom.js';
import type { ConnectionState } from '../gateway.js';
import type { Secret } from '../storage.js';

export function renderLogin(root: HTMLElement, state: ConnectionState, signIn: (secret: Secret) => void): void {
  const kind: Secret['kind'] = state.wantsPassword ? 'password' : 'token';
  const label = kind === 'password' ? 'Gateway password' : 'Gateway token';
  const field = h('input', {
    type: 'password',
    id: 'login-secret',
    name: kind,
    autocomplete: 'current-password',
    required: true,
    'aria-describedby': 'login-help',
  });
  const heading = h('h1', { tabindex: '-1' }, 'Sign in to your gateway');
  replace(
    root,
    h(
      'div',
      { class: 'login' },
      h(
        'form',
        {
          class: 'card login-card',
          onsubmit: (event: Event) => {
            event.preventDefault();
            const value = field.value.trim();
            if (value) signIn({ kind, value });
          },
        },
        heading,
        state.message ? h('p', { class: 'notice error', role: 'alert' }, state.message) : null,
        h('label', { for: 'login-secret' }, label),
        field,
        h(
          'p',
          { id: 'login-help', class: 'muted small' },
          kind === 'password'
            ? 'The password set in gateway.auth.password (or OPENCLAW_GATEWAY_PASSWORD).'
            : 'The token set in gateway.auth.token (or OPENCLAW_GATEWAY_TOKEN, or --token). A link ending in #token=… signs in directly.',
        ),
        h('button', { type: 'submit', class: 'primary' }, 'Connect'),
      ),
    ),
  );
  field.focus();
}
