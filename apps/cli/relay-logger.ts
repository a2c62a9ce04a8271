/**
 * A logger whose destination can change after the kernel has handed out child loggers.
 * The kernel a command runs in is booted before the command is known; when the command is
 * the gateway, it takes that kernel over and its log lines must follow into the gateway's
 * log, including those of plugins that loaded (and took their child logger) already.
 */
import type { Logger } from '../../kernel/index.js';

export interface RelayLogger extends Logger {
  /** Send every line from now on, from this logger and its children, to `next`. */
  retarget(next: Logger): void;
}

export function relayLogger(initial: Logger): RelayLogger {
  let target = initial;
  let generation = 0;
  const relay = (bindings: readonly Record<string, unknown>[]): Logger => {
    let built: { generation: number; logger: Logger } | undefined;
    const current = (): Logger => {
      if (built?.generation !== generation)
        built = { generation, logger: bindings.reduce<Logger>((logger, more) => logger.child(more), target) };
      return built.logger;
    };
    return {
      debug: (message, data) => current().debug(message, data),
      info: (message, data) => current().info(message, data),
      warn: (message, data) => current().warn(message, data),
      error: (message, data) => current().error(message, data),
      child: (more) => relay([...bindings, more]),
    };
  };
  return Object.assign(relay([]), {
    retarget(next: Logger) {
      target = next;
      generation++;
    },
  });
}
