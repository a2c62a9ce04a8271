/**
 * `claw channels add --channel irc` and the wizard: OpenClaw's flags, keys and IRC_*
 * variables. The values are checked as the account would read them (host, port, nick,
 * channel names) before anything is saved; no connection is made.
 */
import type { ChannelSetup } from '../../sdk/channels/index.js';
import { IrcConfigError, resolveIrcSettings } from './config.js';

type AnyRecord = Record<string, unknown>;

export const IRC_SETUP: ChannelSetup = {
  hint: 'server, nick and channels',
  fields: [
    { flag: 'host', key: 'host', label: 'Server host name (irc.libera.chat)', env: 'IRC_HOST', required: true },
    {
      flag: 'port',
      key: 'port',
      type: 'integer',
      label: 'Port (default 6697 with TLS, 6667 without)',
      env: 'IRC_PORT',
    },
    { flag: 'tls', key: 'tls', type: 'boolean', label: 'Connect with TLS (default yes)', env: 'IRC_TLS' },
    { flag: 'nick', key: 'nick', label: "The bot's nick", env: 'IRC_NICK', required: true },
    {
      flag: 'password',
      key: 'password',
      label: 'Server password (PASS), if the server wants one',
      secret: true,
      env: 'IRC_PASSWORD',
    },
    {
      flag: 'channels',
      key: 'channels',
      type: 'list',
      label: 'Channels to join, comma-separated (#claw,#ops)',
      env: 'IRC_CHANNELS',
    },
    {
      flag: 'nickserv-password',
      key: 'nickserv.password',
      label: 'NickServ password, to identify the nick',
      secret: true,
      env: 'IRC_NICKSERV_PASSWORD',
    },
  ],
  verify(values, accountId) {
    try {
      // The values already hold what --use-env stands in for: no variables are read here.
      const settings = resolveIrcSettings(accountId, values as AnyRecord, {});
      return Promise.resolve({
        name: `${settings.nick} on ${settings.host}:${settings.port}${settings.tls ? ' (TLS)' : ''}`,
      });
    } catch (error) {
      if (!(error instanceof IrcConfigError)) throw error;
      // "channels.irc[.accounts.<id>].<key>…": the key names the flag to ask again.
      const key = /^channels\.irc\.(?:accounts\.[^.]+\.)?([a-z]+)/.exec(error.message)?.[1];
      const field = IRC_SETUP.fields.find((candidate) => candidate.key.split('.')[0] === key);
      return Promise.reject(Object.assign(error, field ? { flag: field.flag } : {}));
    }
  },
};
