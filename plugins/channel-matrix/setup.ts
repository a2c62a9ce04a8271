/**
 * `claw channels add --channel matrix` and the wizard: OpenClaw's flags (`--homeserver`,
 * `--user-id`, `--access-token`, `--password`, `--device-name`, `--initial-sync-limit`) and
 * MATRIX_* variables. Before anything is saved the homeserver is asked who the token
 * belongs to (`whoami`), or the password is tried with a login whose device is logged out
 * again at once, so checking leaves no device behind.
 */
import { guardedNet } from '../../sdk/net/index.js';
import type { KernelServices, RuntimeDeps } from '../../sdk/index.js';
import { mergedAccountConfig, type ChannelSetup } from '../../sdk/channels/index.js';
import { createMatrixApi, describeError, isAuthRejected, loadMatrixSdk, passwordLogin } from './client.js';
import {
  accountConfig,
  ACCESS_TOKEN_ENV,
  configPath,
  HOMESERVER_ENV,
  isRecord,
  MatrixConfigError,
  PASSWORD_ENV,
  resolveMatrixSettings,
  USER_ID_ENV,
} from './config.js';

type AnyRecord = Record<string, unknown>;

/** Which flag a config error is about, so the wizard asks that question again. */
const FLAG_OF_KEY: Record<string, string> = {
  homeserver: 'homeserver',
  userId: 'user-id',
  accessToken: 'access-token',
  password: 'password',
  initialSyncLimit: 'initial-sync-limit',
};

function refused(message: string, flag?: string): Error {
  return Object.assign(new MatrixConfigError(message), flag ? { flag } : {});
}

export function matrixSetup(
  kernel: Pick<KernelServices, 'config' | 'capabilities' | 'plugins'>,
  deps: RuntimeDeps,
): ChannelSetup {
  return {
    hint: 'homeserver + access token, or user id + password',
    fields: [
      {
        flag: 'homeserver',
        key: 'homeserver',
        label: 'Homeserver URL (https://matrix.example.org)',
        env: HOMESERVER_ENV,
        required: true,
      },
      { flag: 'user-id', key: 'userId', label: "The bot's full user id (@bot:example.org)", env: USER_ID_ENV },
      {
        flag: 'access-token',
        key: 'accessToken',
        label: 'Access token (or leave empty and give the password)',
        secret: true,
        env: ACCESS_TOKEN_ENV,
      },
      {
        flag: 'password',
        key: 'password',
        label: 'Password, for a login by user id (an access token, when given, is used instead)',
        secret: true,
        env: PASSWORD_ENV,
      },
      { flag: 'device-name', key: 'deviceName', label: 'Device name shown in other sessions (default claw)' },
      {
        flag: 'initial-sync-limit',
        key: 'initialSyncLimit',
        type: 'integer',
        label: 'Recent events per room read on the first start (default 10)',
      },
    ],
    async verify(values, accountId) {
      // Keys already in the config (network.dangerouslyAllowPrivateNetwork, say) count too.
      const section = (kernel.config().channels as AnyRecord | undefined)?.matrix;
      const saved = isRecord(section) ? section : {};
      const accounts = isRecord(saved.accounts) ? saved.accounts : {};
      // `values` is the saved account with the new flags over it: what differs is what is new.
      const before = mergedAccountConfig(saved, accountId);
      const changed = Object.fromEntries(
        Object.entries(values).filter(([key, value]) => JSON.stringify(before[key]) !== JSON.stringify(value)),
      );
      const own = isRecord(accounts[accountId]) ? accounts[accountId] : {};
      const raw =
        accountId === 'default'
          ? { ...before, ...changed }
          : accountConfig({ ...saved, accounts: { ...accounts, [accountId]: { ...own, ...changed } } }, accountId);
      let settings: ReturnType<typeof resolveMatrixSettings>;
      try {
        settings = resolveMatrixSettings(accountId, raw, {});
      } catch (error) {
        const key = /^channels\.matrix\.(?:accounts\.[^.]+\.)?([A-Za-z]+)/.exec((error as Error).message)?.[1];
        throw refused((error as Error).message, (key && FLAG_OF_KEY[key]) ?? 'homeserver');
      }
      const check = await guardedNet(kernel, 'Matrix').checkUrl(settings.homeserver, {
        dangerouslyAllowPrivateNetwork: settings.allowPrivateNetwork,
      });
      if (!check.allowed)
        throw refused(
          `the homeserver ${settings.homeserver} is refused: ${check.reason} (one on this machine or the LAN needs ${configPath(accountId)}.network.dangerouslyAllowPrivateNetwork: true, set with claw config set first)`,
          'homeserver',
        );
      const sdk = await loadMatrixSdk(deps);
      const quiet = () => undefined;
      if (settings.accessToken) {
        const api = createMatrixApi(sdk, {
          baseUrl: settings.homeserver,
          accessToken: settings.accessToken,
          warn: quiet,
        });
        try {
          const whoami = await api.request('GET', '/account/whoami');
          if (settings.userId && whoami.user_id !== settings.userId)
            throw refused(`the access token belongs to ${whoami.user_id}, not ${settings.userId}`, 'user-id');
          return { name: String(whoami.user_id) };
        } catch (error) {
          if ((error as { flag?: string }).flag) throw error;
          throw refused(
            isAuthRejected(error)
              ? `the homeserver rejected the access token (${describeError(error)})`
              : `cannot check the access token with ${settings.homeserver} (${describeError(error)})`,
            'access-token',
          );
        }
      }
      try {
        const login = await passwordLogin(sdk, {
          baseUrl: settings.homeserver,
          userId: settings.userId,
          password: settings.password!,
          deviceName: `${settings.deviceName} (setup check)`,
          warn: quiet,
        });
        const api = createMatrixApi(sdk, { baseUrl: settings.homeserver, accessToken: login.accessToken, warn: quiet });
        await api.request('POST', '/logout', undefined, {}).catch(() => undefined);
        return { name: login.userId };
      } catch (error) {
        throw refused(`the homeserver refused the login for ${settings.userId} (${describeError(error)})`, 'password');
      }
    },
  };
}
