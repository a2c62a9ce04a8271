/**
 * `ctx.gateway.session()`: a connection that outlives drops and refusals, for the node host.
 * Each attempt is a fresh GatewayClient (no reconnect of its own); between attempts the wait
 * doubles from 1 s to 30 s with ±20 % jitter, so a fleet of nodes restarted together does not
 * reconnect in lockstep. A successful handshake resets the wait.
 */
import { loadOrCreateDeviceIdentity } from '../../sdk/device-auth.js';
import { GatewayRequestError, type GatewaySession, type GatewaySessionOptions } from '../../sdk/cli.js';
import { GatewayClient } from './gateway-client.js';

const INITIAL_MS = 1000;
const MAX_MS = 30_000;

export function retryDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(INITIAL_MS * 2 ** attempt, MAX_MS);
  return Math.round(base * (0.8 + 0.4 * random()));
}

export function openGatewaySession(options: GatewaySessionOptions): GatewaySession {
  const identity = loadOrCreateDeviceIdentity(options.identityFile);
  let client: GatewayClient | undefined;
  let closed = false;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;

  const schedule = () => {
    if (closed) return;
    const delay = retryDelay(attempt++);
    timer = setTimeout(connect, delay);
    return delay;
  };

  const connect = () => {
    if (closed) return;
    const { client: info, auth } = options;
    // Only a connection that completed its handshake counts as dropped; a failed one is a connect error.
    let opened = false;
    const current = new GatewayClient({
      url: options.url,
      token: auth.token,
      password: auth.password,
      deviceToken: auth.deviceToken,
      bootstrapToken: auth.bootstrapToken,
      identity,
      role: options.role,
      scopes: [],
      client: info,
      caps: options.caps,
      commands: options.commands,
      pathEnv: options.pathEnv,
      tlsFingerprint: options.tlsFingerprint,
      reconnect: false,
      onHello: () => {
        opened = true;
      },
      onEvent: (frame) => {
        if (client === current) options.onEvent?.({ event: frame.event, payload: frame.payload });
      },
      onClose: ({ code, reason }) => {
        if (client !== current || closed || !opened) return;
        client = undefined;
        options.onClose?.({ code, reason });
        schedule();
      },
    });
    client = current;
    current.connect().then(
      (hello) => {
        attempt = 0;
        options.onHello?.({ role: hello.auth.role, scopes: hello.auth.scopes, deviceToken: hello.auth.deviceToken });
      },
      (error: unknown) => {
        if (client !== current || closed) return;
        client = undefined;
        const refusal =
          error instanceof GatewayRequestError
            ? error
            : new GatewayRequestError({ code: 'UNAVAILABLE', message: String(error) });
        const delay = retryDelay(attempt);
        if (options.onConnectError?.(refusal, delay) === false) return;
        attempt++;
        timer = setTimeout(connect, delay);
      },
    );
  };

  connect();
  return {
    get connected() {
      return client?.connected ?? false;
    },
    request(method, params, requestOptions) {
      if (!client)
        return Promise.reject(
          new GatewayRequestError({ code: 'UNAVAILABLE', message: 'not connected to the gateway', retryable: true }),
        );
      return client.request(method, params, requestOptions);
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      const current = client;
      client = undefined;
      await current?.close();
    },
  };
}
