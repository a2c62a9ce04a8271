/**
 * A real IRC server for the IRC channel's tests: Debian's ngircd (installed by .ci/run),
 * configured in a temp dir and listening on 127.0.0.1, and IRC users driven as raw sockets
 * so the test sees every line exactly as the server relays it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// No test helpers here: the IRC bench (test/bench/irc.ts) runs this outside vitest.

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Wait for `check` to return true (or throw to keep waiting), at most `timeoutMs`. */
async function waitFor(check: () => boolean, options: { what: string; timeoutMs?: number }): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let last: unknown;
  for (;;) {
    try {
      if (check()) return;
      last = undefined;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${options.what}${last ? ` (last error: ${(last as Error).message})` : ''}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export const NGIRCD = ['/usr/sbin/ngircd', '/usr/bin/ngircd'].find((path) => existsSync(path));

export class IrcServer {
  port = 0;
  /** With `tls`: the TLS port, and the self-signed certificate a client must trust (PEM file). */
  tlsPort = 0;
  caFile = '';

  constructor(private readonly options: { tls?: boolean } = {}) {}

  private child?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'claw-ngircd-'));

  async start(): Promise<void> {
    if (!NGIRCD) throw new Error('ngircd is not installed (apt-get install ngircd; .ci/run does)');
    this.port ||= await freePort();
    const config = join(this.dir, 'ngircd.conf');
    const ssl: string[] = [];
    if (this.options.tls) {
      this.tlsPort ||= await freePort();
      this.caFile = join(this.dir, 'cert.pem');
      const key = join(this.dir, 'key.pem');
      if (!existsSync(this.caFile)) {
        execFileSync(
          'openssl',
          [
            'req',
            '-x509',
            '-newkey',
            'rsa:2048',
            '-nodes',
            '-days',
            '1',
            '-subj',
            '/CN=127.0.0.1',
            '-addext',
            'subjectAltName=IP:127.0.0.1',
            '-keyout',
            key,
            '-out',
            this.caFile,
          ],
          { stdio: 'ignore' },
        );
        // ngircd drops to an unprivileged user before it reads them (a throwaway test key).
        chmodSync(key, 0o644);
        chmodSync(this.dir, 0o755);
      }
      ssl.push('[SSL]', `CertFile = ${this.caFile}`, `KeyFile = ${key}`, `Ports = ${this.tlsPort}`);
    }
    writeFileSync(
      config,
      [
        '[Global]',
        'Name = irc.claw.test',
        'Info = claw test server',
        'Listen = 127.0.0.1',
        `Ports = ${this.port}`,
        'MotdPhrase = claw test server',
        `PidFile = ${join(this.dir, 'ngircd.pid')}`,
        '[Limits]',
        'MaxNickLength = 30',
        'MaxConnectionsIP = 0',
        'PingTimeout = 120',
        '[Options]',
        'PAM = no',
        'Ident = no',
        'DNS = no',
        ...ssl,
        '',
      ].join('\n'),
    );
    const child = spawn(NGIRCD, ['--nodaemon', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitFor(() => output.includes('ready') || child.exitCode !== null, {
      what: 'ngircd to be ready',
      timeoutMs: 15_000,
    });
    if (child.exitCode !== null) throw new Error(`ngircd exited: ${output}`);
  }

  /** Kill the server (SIGKILL: no goodbye to anyone) and wait until it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** An IRC user on a raw socket: every line it receives is kept. */
export class IrcUser {
  readonly lines: string[] = [];
  private socket?: Socket;
  private buffer = '';
  private pings = 0;

  constructor(
    readonly nick: string,
    private readonly port: number,
    private readonly username = nick,
  ) {}

  async connect(): Promise<this> {
    const socket = connect(this.port, '127.0.0.1');
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end: number;
      while ((end = this.buffer.indexOf('\r\n')) !== -1) {
        const line = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        if (line.startsWith('PING ')) socket.write(`PONG ${line.slice(5)}\r\n`);
        this.lines.push(line);
      }
    });
    socket.on('error', () => {});
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    this.raw(`NICK ${this.nick}`);
    this.raw(`USER ${this.username} 0 * :${this.nick}`);
    await waitFor(
      () => {
        if (this.lines.some((line) => / 433 /.test(line))) throw new Error(`the nick ${this.nick} is in use`);
        return this.lines.some((line) => / 001 /.test(line));
      },
      { what: `${this.nick} to register` },
    );
    return this;
  }

  raw(line: string): void {
    this.socket!.write(`${line}\r\n`);
  }

  private readonly channels = new Set<string>();

  async join(channel: string): Promise<void> {
    if (this.channels.has(channel)) return;
    this.raw(`JOIN ${channel}`);
    const joined = (line: string) => line.startsWith(`:${this.nick}!`) && / JOIN :?(\S+)$/.exec(line)?.[1] === channel;
    await waitFor(() => this.lines.some(joined), { what: `${this.nick} to join ${channel}` });
    this.channels.add(channel);
  }

  /** Send a message and wait until the server has processed it (a PING answered after it). */
  async say(target: string, text: string): Promise<void> {
    this.raw(`PRIVMSG ${target} :${text}`);
    await this.sync();
  }

  async sync(): Promise<void> {
    const token = `sync-${++this.pings}`;
    this.raw(`PING ${token}`);
    await waitFor(() => this.lines.some((line) => line.includes('PONG') && line.includes(token)), {
      what: `the server's answer to ${token}`,
    });
  }

  /** PRIVMSGs this user received from `from` (all senders if omitted): target and text, raw line too. */
  received(from?: string): Array<{ from: string; target: string; text: string; raw: string }> {
    const out = [];
    for (const raw of this.lines) {
      const match = /^:([^!\s]+)![^\s]+ PRIVMSG (\S+) :(.*)$/.exec(raw);
      if (!match || (from && match[1]!.toLowerCase() !== from.toLowerCase())) continue;
      out.push({ from: match[1]!, target: match[2]!, text: match[3]!, raw });
    }
    return out;
  }

  /** QUIT, and resolve when the server has closed the connection (the nick is free again). */
  async quit(): Promise<void> {
    const socket = this.socket!;
    const closed = new Promise((resolve) => socket.once('close', resolve));
    this.raw('QUIT :bye');
    await closed;
  }

  close(): void {
    this.socket?.destroy();
  }
}
