/**
 * The IRC channel against a real IRC server (ngircd, started here on 127.0.0.1), driven by
 * the real irc-framework: the shared channel contract, then what is particular to IRC —
 * sender masks, mention gating in channels, replies split under the 512-byte line limit,
 * `/me`, NickServ, and the server killed and restarted under a running gateway.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../sdk/index.js';
import { channelContractSuite } from '../sdk/channels/contract.js';
import {
  agentStackDirs,
  createTestKernel,
  lastUserText,
  scriptedModel,
  type ScriptedAnswer,
  type TestKernel,
} from '../sdk/testing.js';
import { ircGroupAccess, senderMatches } from '../plugins/channel-irc/access.js';
import { mentions } from '../plugins/channel-irc/account.js';
import { IrcConfigError, resolveIrcSettings } from '../plugins/channel-irc/config.js';
import { FloodGate } from '../plugins/channel-irc/flood.js';
import { ircLines, lineBudget, logicalLines, splitLine } from '../plugins/channel-irc/lines.js';
import { IrcServer, IrcUser } from './irc-server.js';
import { claw, startCliGateway, tempDir, waitFor } from './helpers.js';

const IRC = fileURLToPath(new URL('../plugins/channel-irc/', import.meta.url));
const BOT = 'clawbot';
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

// ── Pieces ─────────────────────────────────────────────────────────────────────────

describe('irc lines', () => {
  it('renders soft breaks as spaces, paragraphs and code lines as lines, and drops empty ones', () => {
    expect(logicalLines('one\ntwo\n\nthree\n```\ncode  a\n\ncode b\n```\n\n\nfour')).toEqual([
      'one two',
      'three',
      'code  a',
      'code b',
      'four',
    ]);
  });

  it('cuts at spaces within the byte budget, and between characters, never inside one', () => {
    expect(splitLine('aaa bbb ccc', 7)).toEqual(['aaa bbb', 'ccc']);
    const long = 'é'.repeat(10); // 2 bytes each
    const pieces = splitLine(long, 5);
    expect(pieces).toEqual(['éé', 'éé', 'éé', 'éé', 'éé']);
    const mixed = `start ${'🦞'.repeat(30)} end`;
    for (const piece of splitLine(mixed, 21)) expect(bytes(piece)).toBeLessThanOrEqual(21);
    expect(splitLine(mixed, 21).join('').replace(/\s/g, '')).toBe(mixed.replace(/\s/g, ''));
  });

  it('leaves room for the prefix the server puts in front, and for a /me', () => {
    const plain = lineBudget('bot', 'bot', '#room');
    // 512 - CRLF - ":bot!bot@" - 63 host bytes - " PRIVMSG #room :"
    expect(plain).toBe(512 - 2 - 9 - 63 - 16);
    expect(lineBudget('bot', 'bot', '#room', true)).toBe(plain - 9);
    expect(ircLines('x'.repeat(1000), plain).every((line) => line.length <= plain)).toBe(true);
  });

  it('paces lines: a burst, then one per interval, in order', async () => {
    const gate = new FloodGate(2, 40);
    const started = Date.now();
    const times: number[] = [];
    await Promise.all([1, 2, 3, 4].map(() => gate.take().then(() => times.push(Date.now() - started))));
    // Only lower bounds: a loaded machine may be late, never early. The burst of two goes
    // together; each later line waits an interval.
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(35);
    expect(times[3]! - times[2]!).toBeGreaterThanOrEqual(35);
    expect(times[3]!).toBeGreaterThanOrEqual(75);
    gate.close();
    await expect(gate.take()).rejects.toThrow(/closing/);
  });
});

describe('irc access', () => {
  const sender = { nick: 'Alice', mask: 'Alice!~alice@host.example' };

  it('matches masks with globs, and bare nicks only when name matching is allowed', () => {
    expect(senderMatches('alice!~alice@host.example', sender, false)).toBe(true);
    expect(senderMatches('*!*@host.example', sender, false)).toBe(true);
    expect(senderMatches('*!*@other.example', sender, false)).toBe(false);
    expect(senderMatches('alice', sender, false)).toBe(false);
    expect(senderMatches('alice', sender, true)).toBe(true);
    expect(senderMatches('*', sender, false)).toBe(true);
  });

  it('admits channels by name (with or without #), then senders by the channel allowFrom', () => {
    const message = (channel: string, id: string) => ({
      accountId: 'default',
      peer: { kind: 'group' as const, id: channel },
      sender: { id, name: id.split('!')[0] },
      text: 'hi',
      messageId: 'm',
    });
    const config = {
      groupPolicy: 'allowlist',
      groupAllowFrom: ['ops'],
      groups: { '#Team': { allowFrom: ['*!*@trusted.example'], requireMention: false } },
    };
    expect(ircGroupAccess(message('#ops', 'x!y@z'), config)).toEqual({ allow: true, requireMention: true });
    expect(ircGroupAccess(message('#team', 'bob!b@trusted.example'), config)).toEqual({
      allow: true,
      requireMention: false,
    });
    expect(ircGroupAccess(message('#team', 'eve!e@evil.example'), config)).toMatchObject({ allow: false });
    expect(ircGroupAccess(message('#random', 'x!y@z'), config)).toMatchObject({
      allow: false,
      reason: expect.stringContaining('#random'),
    });
    expect(ircGroupAccess(message('#random', 'x!y@z'), { groupPolicy: 'disabled' })).toMatchObject({ allow: false });
  });

  it('sees its nick addressed as a word, not inside another word', () => {
    expect(mentions('clawbot: hi', 'clawbot')).toBe(true);
    expect(mentions('hey ClawBot, hi', 'clawbot')).toBe(true);
    expect(mentions('clawbot2 hi', 'clawbot')).toBe(false);
    expect(mentions('nothing here', 'clawbot')).toBe(false);
  });

  it('names what is wrong in the config', () => {
    expect(() => resolveIrcSettings('default', {}, {})).toThrow(IrcConfigError);
    expect(() => resolveIrcSettings('default', { host: 'h' }, {})).toThrow(/nick is required/);
    expect(() => resolveIrcSettings('default', { host: 'h', nick: '9bad' }, {})).toThrow(/not a valid IRC nick/);
    expect(() => resolveIrcSettings('work', { host: 'h', nick: 'b', port: 70000 }, {})).toThrow(
      /channels\.irc\.accounts\.work\.port/,
    );
    expect(() => resolveIrcSettings('default', { host: 'h', nick: 'b', channels: ['nohash'] }, {})).toThrow(
      /not an IRC channel name/,
    );
    expect(() => resolveIrcSettings('default', { host: 'h', nick: 'b', passwordFile: '/nonexistent' }, {})).toThrow(
      /passwordFile: \/nonexistent does not exist/,
    );
    expect(resolveIrcSettings('default', { host: 'h', nick: 'b' }, {})).toMatchObject({ tls: true, port: 6697 });
    expect(resolveIrcSettings('default', {}, { IRC_HOST: 'h', IRC_NICK: 'n', IRC_TLS: 'false' })).toMatchObject({
      host: 'h',
      nick: 'n',
      tls: false,
      port: 6667,
    });
    // Variables fill only the default account.
    expect(() => resolveIrcSettings('work', {}, { IRC_HOST: 'h', IRC_NICK: 'n' })).toThrow(/host is required/);
  });
});

// ── The shared channel contract, against ngircd ────────────────────────────────────

const contractServer = new IrcServer();
const contractUsers = new Map<string, IrcUser>();
/** Who reads each channel for the suite (every member sees the bot's line; one is enough). */
const channelReaders = new Map<string, IrcUser>();
const delivered = new Set<string>();

async function contractUser(nick: string): Promise<IrcUser> {
  let user = contractUsers.get(nick);
  if (!user) {
    user = await new IrcUser(nick, contractServer.port).connect();
    contractUsers.set(nick, user);
  }
  return user;
}

channelContractSuite({
  channel: 'irc',
  plugin: IRC,
  // The suite names senders by nick ("owner-1"), so nicks may match here; the default (masks
  // only) is tested below.
  config: () => ({
    host: '127.0.0.1',
    port: contractServer.port,
    tls: false,
    nick: BOT,
    channels: ['#group-7', '#group-ok', '#group-other'],
    dangerouslyAllowNameMatching: true,
  }),
  textLimit: 350,
  groups: true,
  platform: {
    start: () => contractServer.start(),
    stop: async () => {
      for (const user of contractUsers.values()) user.close();
      await contractServer.stop();
    },
    deliver: async (message) => {
      // IRC has no message ids and a server never delivers a line twice: a "redelivery" of
      // the same message cannot happen on IRC, so it is not sent again.
      if (message.messageId && delivered.has(message.messageId)) return;
      if (message.messageId) delivered.add(message.messageId);
      const user = await contractUser(message.senderId);
      if (message.kind === 'direct') return user.say(BOT, message.text);
      const channel = `#${message.chatId}`;
      if (!channelReaders.has(channel)) channelReaders.set(channel, user);
      await user.join(channel);
      await user.say(channel, message.mention ? `${BOT}: ${message.text}` : message.text);
    },
    sent: () => {
      const out: Array<{ chatId: string; text: string }> = [];
      for (const user of contractUsers.values())
        for (const line of user.received(BOT)) {
          if (!line.target.startsWith('#')) out.push({ chatId: user.nick, text: line.text });
          else if (channelReaders.get(line.target) === user)
            out.push({ chatId: line.target.slice(1), text: line.text });
        }
      return out;
    },
    reset: () => {
      for (const user of contractUsers.values()) user.lines.length = 0;
    },
  },
});

// ── IRC specifics ──────────────────────────────────────────────────────────────────

describe('irc channel against ngircd', () => {
  const server = new IrcServer();
  const users: IrcUser[] = [];
  const requests: ModelRequest[] = [];
  let answer: (request: ModelRequest) => ScriptedAnswer = (request) => `echo: ${lastUserText(request)}`;
  let kernel: TestKernel | undefined;

  const user = async (nick: string) => {
    const created = await new IrcUser(nick, server.port).connect();
    users.push(created);
    return created;
  };
  const boot = async (access: Record<string, unknown> = {}) => {
    await kernel?.dispose();
    kernel = await createTestKernel({
      plugins: [...agentStackDirs(), IRC, scriptedModel((request) => (requests.push(request), answer(request)))],
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        messages: { queue: { debounceMs: 0 } },
        channels: {
          irc: {
            host: '127.0.0.1',
            port: server.port,
            tls: false,
            nick: BOT,
            channels: ['#room'],
            ...access,
          },
        },
      },
    });
    await kernel.start();
    return kernel;
  };
  const ircStatus = async () =>
    (await kernel!.plugins.kernelServices.channels.status()).find((channel) => channel.id === 'irc')!.accounts[0]!;

  beforeAll(() => server.start());
  afterEach(async () => {
    await kernel?.dispose();
    kernel = undefined;
    for (const item of users.splice(0)) item.close();
    requests.length = 0;
    answer = (request) => `echo: ${lastUserText(request)}`;
  });
  afterAll(() => server.stop());

  it('pairs an unknown sender by their nick!user@host, not their nick, then answers them', async () => {
    await boot({ dmPolicy: 'pairing' });
    const pat = await user('pat');
    await pat.say(BOT, 'hello?');
    await waitFor(() => pat.received(BOT).length > 0, { what: 'the pairing notice' });
    const notice = pat.received(BOT)[0]!.text;
    const code = /pairing code is ([A-Z0-9]{8})/.exec(notice)?.[1];
    expect(code, notice).toBeDefined();
    // Soft line breaks of the notice arrive on one line.
    expect(notice).toContain(`claw pairing approve irc ${code}`);
    const approved = await kernel!.plugins.kernelServices.channels.pairing.approve('irc', code!);
    expect(approved?.senderId).toMatch(/^pat!~?pat@/);
    await pat.say(BOT, 'now?');
    await waitFor(() => pat.received(BOT).some((line) => line.text === 'echo: now?'), { what: 'the answer' });
    // The same nick from another user (another ident) is someone else: not answered, asked to pair.
    await pat.quit();
    const impostor = new IrcUser('pat', server.port, 'mallory');
    await impostor.connect();
    users.push(impostor);
    await impostor.say(BOT, 'it is me, really');
    await waitFor(() => impostor.received(BOT).some((line) => line.text.includes('pairing code is')), {
      what: 'a pairing notice for the impostor',
    });
    expect(requests.map(lastUserText)).not.toContain('it is me, really');
  });

  it('answers in a channel only when mentioned, and sends /me as an action', async () => {
    await boot({ dmPolicy: 'allowlist', allowFrom: ['*'], groupPolicy: 'allowlist', groups: { '#room': {} } });
    const ann = await user('ann');
    await ann.join('#room');
    await ann.say('#room', 'the deploy is at noon');
    await ann.sync();
    expect(requests).toHaveLength(0);
    await ann.say('#room', `${BOT}, when is the deploy?`);
    await waitFor(() => ann.received(BOT).some((line) => line.target === '#room'), { what: 'the channel answer' });
    expect(lastUserText(requests[0]!)).toContain('when is the deploy?');
    expect(requests[0]!.systemPrompt).toContain('the deploy is at noon');
    const sent = await kernel!.plugins.kernelServices.channels.send({ channel: 'irc', to: '#room', text: '/me waves' });
    expect(sent).toMatchObject({ delivered: true });
    await waitFor(() => ann.received(BOT).some((line) => line.text === '\x01ACTION waves\x01'), {
      what: 'the action',
    });
  });

  it('splits a 3,000-character reply into lines under 512 bytes, in order, losing nothing', async () => {
    const words = Array.from({ length: 400 }, (_, i) => (i % 7 === 0 ? `größe${i}🦞` : `word${i}`));
    let long = '';
    for (const word of words) if (long.length + word.length + 1 <= 3000) long += `${long ? ' ' : ''}${word}`;
    long = long.padEnd(3000, 'x');
    answer = () => long;
    await boot({ dmPolicy: 'allowlist', allowFrom: ['*'] });
    const bob = await user('bob');
    await bob.say(BOT, 'a long one please');
    const strip = (text: string) => text.replace(/\s/g, '');
    await waitFor(
      () =>
        strip(
          bob
            .received(BOT)
            .map((line) => line.text)
            .join(''),
        ).length >= strip(long).length,
      {
        what: 'the whole reply',
        timeoutMs: 30_000,
      },
    );
    const lines = bob.received(BOT);
    expect(lines.length).toBeGreaterThan(6);
    // Each line exactly as the server relayed it, prefix included, without its CRLF.
    for (const line of lines) expect(bytes(line.raw)).toBeLessThanOrEqual(510);
    expect(strip(lines.map((line) => line.text).join(''))).toBe(strip(long));
  }, 60_000);

  it('identifies with NickServ after connecting, and keeps the password out of status', async () => {
    const nickserv = await user('NickServ');
    await boot({ nickserv: { password: 'ns-secret-4711' } });
    await waitFor(() => nickserv.received(BOT).some((line) => line.text === 'IDENTIFY ns-secret-4711'), {
      what: 'IDENTIFY',
    });
    const status = await ircStatus();
    expect(status).toMatchObject({ connected: true, nick: BOT, channels: ['#room'] });
    expect(JSON.stringify(status)).not.toContain('ns-secret-4711');
  });

  it('starts while the server is down, says why, and connects when it comes up', async () => {
    const later = new IrcServer();
    await later.start();
    await later.kill();
    kernel = await createTestKernel({
      plugins: [...agentStackDirs(), IRC, scriptedModel(() => 'hi')],
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        channels: { irc: { host: '127.0.0.1', port: later.port, tls: false, nick: 'latebot', channels: ['#late'] } },
      },
    });
    await kernel.start();
    const down = await ircStatus();
    expect(down).toMatchObject({ running: true, connected: false });
    expect(down.lastError).toMatch(/ECONNREFUSED|lost/);
    await later.start();
    await waitFor(
      async () => {
        const status = await ircStatus();
        return status.connected && (status.channels as string[]).includes('#late');
      },
      { what: 'the account to connect once the server is up', timeoutMs: 20_000 },
    );
    await kernel.dispose();
    kernel = undefined;
    await later.stop();
  }, 40_000);

  it('says what the server answered when it refuses the connection', async () => {
    // ngircd here has no server password: one sent anyway is refused.
    await boot({ password: 'not-expected-6502' });
    const refused = await ircStatus();
    expect(refused.connected).toBe(false);
    expect(refused.lastError).toMatch(/the server said: .*password/i);
    expect(JSON.stringify(refused)).not.toContain('not-expected-6502');
  });

  it('registers under a fallback nick while its own is taken, then takes it back', async () => {
    const squatter = await user(BOT);
    await boot();
    expect((await ircStatus()).nick).toBe(`${BOT}_`);
    await squatter.quit();
    await waitFor(async () => (await ircStatus()).nick === BOT, { what: 'the nick back', timeoutMs: 15_000 });
  }, 30_000);

  it('reconnects and rejoins after the server is killed, and answers each message once', async () => {
    await boot({
      dmPolicy: 'allowlist',
      allowFrom: ['*'],
      groupPolicy: 'open',
      groups: { '*': { requireMention: false } },
    });
    let cy = await user('cy');
    await cy.join('#room');
    await cy.say('#room', 'before the crash');
    await waitFor(() => cy.received(BOT).length > 0, { what: 'the first answer' });
    await server.kill();
    await waitFor(async () => (await ircStatus()).connected === false, { what: 'the account to notice' });
    expect((await ircStatus()).lastError).toMatch(/connection to 127\.0\.0\.1:\d+ lost/);
    await server.start();
    await waitFor(
      async () => {
        const status = await ircStatus();
        return status.connected && (status.channels as string[]).includes('#room');
      },
      { what: 'reconnect and rejoin', timeoutMs: 20_000 },
    );
    cy.close();
    cy = await user('cy');
    await cy.join('#room');
    await cy.say('#room', 'after the restart');
    await waitFor(() => cy.received(BOT).some((line) => line.text === 'echo: after the restart'), {
      what: 'the answer after the restart',
    });
    await cy.sync();
    expect(requests.map(lastUserText)).toEqual(['before the crash', 'after the restart']);
    expect(cy.received(BOT).filter((line) => line.text === 'echo: after the restart')).toHaveLength(1);
    expect((await ircStatus()).lastError).toBeUndefined();
  }, 60_000);
});

describe('claw channels status with an IRC account', () => {
  const server = new IrcServer();
  beforeAll(() => server.start());
  afterAll(() => server.stop());

  it('tells the truth: connected and in its channels, then the lost connection, never the password', async () => {
    const stateDir = tempDir('claw-irc-cli-');
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      JSON.stringify({
        channels: {
          irc: {
            host: '127.0.0.1',
            port: server.port,
            tls: false,
            nick: 'statusbot',
            channels: ['#ops'],
            nickserv: { password: 'nickserv-pass-2718' },
          },
        },
      }),
      { mode: 0o600 },
    );
    const env = { OPENCLAW_STATE_DIR: stateDir };
    await startCliGateway(env);
    const account = async () => {
      const status = await claw(['channels', 'status', '--json'], env);
      expect(status.stdout).not.toContain('nickserv-pass-2718');
      return JSON.parse(status.stdout).channels.find((channel: { id: string }) => channel.id === 'irc')?.accounts[0];
    };
    expect(
      await waitFor(async () => ((await account())?.channels?.includes('#ops') ? account() : undefined), {
        what: 'the IRC account in #ops',
        timeoutMs: 20_000,
      }),
    ).toMatchObject({ running: true, connected: true, nick: 'statusbot' });
    const text = await claw(['channels', 'status'], env);
    expect(text.stdout).toMatch(/irc/i);
    expect(text.stdout).not.toContain('nickserv-pass-2718');
    await server.kill();
    const lost = await waitFor(async () => ((await account())?.connected === false ? account() : undefined), {
      what: 'the account to report the lost connection',
      timeoutMs: 20_000,
    });
    expect(lost.lastError).toMatch(/connection to 127\.0\.0\.1:\d+ lost/);
  }, 60_000);
});

describe('IRC over TLS', () => {
  const server = new IrcServer({ tls: true });
  beforeAll(() => server.start());
  afterAll(() => server.stop());

  const configure = (stateDir: string) => {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    writeFileSync(
      join(stateDir, 'openclaw.json'),
      JSON.stringify({
        channels: { irc: { host: '127.0.0.1', port: server.tlsPort, nick: 'tlsbot', channels: ['#sec'] } },
      }),
      { mode: 0o600 },
    );
  };
  const ircAccount = async (env: Record<string, string>) => {
    const status = await claw(['channels', 'status', '--json'], env);
    return JSON.parse(status.stdout).channels.find((channel: { id: string }) => channel.id === 'irc')?.accounts[0];
  };

  it('connects with the certificate checked, and refuses a certificate it cannot verify', async () => {
    const trusted = { OPENCLAW_STATE_DIR: tempDir('claw-irc-tls-'), NODE_EXTRA_CA_CERTS: server.caFile };
    configure(trusted.OPENCLAW_STATE_DIR);
    await startCliGateway(trusted);
    expect(
      await waitFor(
        async () => ((await ircAccount(trusted))?.channels?.includes('#sec') ? ircAccount(trusted) : undefined),
        {
          what: 'the TLS account in #sec',
          timeoutMs: 20_000,
        },
      ),
    ).toMatchObject({ connected: true, server: `127.0.0.1:${server.tlsPort} (TLS)` });

    const untrusted = { OPENCLAW_STATE_DIR: tempDir('claw-irc-tls-') };
    configure(untrusted.OPENCLAW_STATE_DIR);
    await startCliGateway(untrusted, ['--port', '0']);
    const refused = await waitFor(
      async () => ((await ircAccount(untrusted))?.lastError ? ircAccount(untrusted) : undefined),
      { what: 'the certificate refused', timeoutMs: 20_000 },
    );
    expect(refused.connected).toBe(false);
    expect(refused.lastError).toMatch(/certificate/i);
  }, 90_000);
});

describe('IRC SASL', () => {
  /**
   * ngircd has no SASL: a loopback server speaking just the registration with IRCv3
   * capability negotiation and SASL PLAIN, accepting one account and password.
   */
  const logins: string[] = [];
  const server = createServer((socket: Socket) => {
    let buffer = '';
    let nick = '*';
    const send = (line: string) => socket.write(`:sasl.test ${line}\r\n`);
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      let end: number;
      while ((end = buffer.indexOf('\r\n')) !== -1) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const [command, ...rest] = line.split(' ');
        if (command === 'CAP' && rest[0] === 'LS') send('CAP * LS :sasl');
        else if (command === 'CAP' && rest[0] === 'REQ') send(`CAP * ACK ${rest.slice(1).join(' ')}`);
        else if (command === 'AUTHENTICATE' && rest[0] === 'PLAIN') socket.write('AUTHENTICATE +\r\n');
        else if (command === 'AUTHENTICATE') {
          const login = Buffer.from(rest[0]!, 'base64').toString();
          logins.push(login);
          // authzid (empty or the account), authcid, password
          const [, account, password] = login.split('\0');
          if (account === 'saslbot' && password === 'right-pass-31') {
            send(`900 ${nick} ${nick}!u@h saslbot :You are now logged in as saslbot`);
            send(`903 ${nick} :SASL authentication successful`);
          } else send(`904 ${nick} :SASL authentication failed`);
        } else if (command === 'NICK') nick = rest[0]!;
        else if (command === 'CAP' && rest[0] === 'END') {
          send(`001 ${nick} :Welcome`);
          send(`376 ${nick} :End of MOTD`);
        } else if (command === 'PING') send(`PONG sasl.test ${rest.join(' ')}`);
      }
    });
    socket.on('error', () => {});
  });
  let kernel: TestKernel | undefined;
  beforeAll(() => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)));
  afterEach(async () => {
    await kernel?.dispose();
    kernel = undefined;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const boot = async (password: string) => {
    kernel = await createTestKernel({
      plugins: [...agentStackDirs(), IRC, scriptedModel(() => 'hi')],
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        channels: {
          irc: {
            host: '127.0.0.1',
            port: (server.address() as { port: number }).port,
            tls: false,
            nick: 'saslbot',
            sasl: { account: 'saslbot', password },
          },
        },
      },
    });
    await kernel.start();
    return async () =>
      (await kernel!.plugins.kernelServices.channels.status()).find((channel) => channel.id === 'irc')!.accounts[0]!;
  };

  it('logs in with SASL PLAIN before registering', async () => {
    const status = await boot('right-pass-31');
    await waitFor(async () => (await status()).connected, { what: 'the account to connect' });
    expect(logins.some((login) => login.endsWith('\0saslbot\0right-pass-31'))).toBe(true);
  });

  it('does not stay connected when the SASL login is refused, and says so without the password', async () => {
    const status = await boot('wrong-pass-27');
    const refused = await waitFor(async () => ((await status()).lastError ? status() : undefined), {
      what: 'the refusal',
    });
    expect(refused.connected).toBe(false);
    expect(refused.lastError).toMatch(/SASL login as saslbot failed|lost/);
    expect(JSON.stringify(refused)).not.toContain('wrong-pass-27');
  });
});
