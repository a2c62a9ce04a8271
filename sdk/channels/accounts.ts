/**
 * The account lifecycle every bot-token channel repeats: the accounts this process runs
 * (started by the channels plugin, one per `channels.<id>.accounts.<accountId>`), and
 * send-only clients for the ones it does not run — `claw message send` sends from a process
 * that never polls, and a reply a restart delivers early may go out before its account has
 * started. A channel keeps its own account class and settings; this keeps the map.
 */
import type { ChannelAccountContext, ChannelStatus } from '../types/channels.js';
import { configuredAccounts } from './config.js';
import { ChannelSendError } from './errors.js';

/** What a running account offers the kit. */
export interface RunningAccount<Sender> {
  readonly sender: Sender;
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): ChannelStatus;
}

export class ChannelAccounts<Account extends RunningAccount<Sender>, Sender> {
  private readonly running = new Map<string, Account>();
  /** Send-only clients by account id, with the settings key they were built for. */
  private readonly senders = new Map<string, { key: string; sender: Sender }>();

  /** `section`: the channel's config section now (`channels.<id>`), for the accounts it lists. */
  constructor(private readonly section: () => Record<string, unknown> | undefined) {}

  get(accountId: string): Account | undefined {
    return this.running.get(accountId);
  }

  all(): Account[] {
    return [...this.running.values()];
  }

  /**
   * Start an account built by `create` (one already running under the id is stopped first);
   * it stops when the channels plugin aborts `ctx.signal`, and a failed start leaves nothing
   * running.
   */
  async start(ctx: ChannelAccountContext, create: () => Account | Promise<Account>): Promise<Account> {
    await this.stop(ctx.accountId);
    const account = await create();
    this.running.set(ctx.accountId, account);
    ctx.signal.addEventListener('abort', () => void account.stop(), { once: true });
    try {
      await account.start();
    } catch (error) {
      this.running.delete(ctx.accountId);
      await account.stop();
      throw error;
    }
    return account;
  }

  async stop(accountId: string): Promise<void> {
    const account = this.running.get(accountId);
    if (!account) return;
    this.running.delete(accountId);
    await account.stop();
  }

  /** The account a send without one goes out on: "default" if there is one, else the first configured. */
  defaultAccount(): string {
    if (this.running.has('default')) return 'default';
    const ids = configuredAccounts(this.section());
    return ids.includes('default') ? 'default' : ids[0]!;
  }

  /**
   * The running account's sender, else a send-only one: `build` reads the account's
   * settings and returns the client with a key of the settings it depends on (a changed
   * token or API root builds a new one). A settings error is a send error nobody retries.
   */
  async sender(
    accountId: string | undefined,
    build: (id: string) => Promise<{ key: string; sender: () => Promise<Sender> | Sender }>,
  ): Promise<Sender> {
    const id = accountId ?? this.defaultAccount();
    const running = this.running.get(id);
    if (running) return running.sender;
    let built: Awaited<ReturnType<typeof build>>;
    try {
      built = await build(id);
    } catch (error) {
      throw new ChannelSendError((error as Error).message, { retryable: false, cause: error });
    }
    const cached = this.senders.get(id);
    if (cached?.key === built.key) return cached.sender;
    const sender = await built.sender();
    this.senders.set(id, { key: built.key, sender });
    return sender;
  }

  status(): ChannelStatus[] {
    return this.all().map((account) => account.status());
  }
}
