/**
 * Cron: the scheduler service (started with the gateway), the cron.* gateway methods and
 * `cron` events, the `cron` tool and `claw cron` / `claw automations`. Runs happen on the
 * kernel's `cron` lane, whose cap is `cron.maxConcurrentRuns`.
 */
import { isAbsolute, resolve } from 'node:path';
import { definePlugin, expandHome } from '../../sdk/index.js';
import { guardedNet } from '../../sdk/net/index.js';
import { cliCommand } from '../../sdk/cli.js';
import { cronCommand, CRON_HELP } from './cli.js';
import { createExecutor } from './execute.js';
import { registerCronJobRead } from './job-read.js';
import { registerCronMethods } from './methods.js';
import { parseByteSize } from './schedule.js';
import { CronService } from './service.js';
import { CronStore, defaultStorePath, RunLog } from './store.js';
import { cronTool } from './tool.js';
import type { CronSection } from './types.js';
import { postWebhook } from './webhook.js';

export default definePlugin({
  id: 'cron',
  register(api) {
    const settings = api.section<CronSection>('cron');
    const givenCatchUp = (api.kernel.config() as { cron?: { catchUp?: string } }).cron?.catchUp;
    if (settings.skipMissedJobs && givenCatchUp !== undefined && givenCatchUp !== 'skip') {
      throw new Error(`cron.skipMissedJobs: true contradicts cron.catchUp: "${settings.catchUp}"; keep one of them`);
    }
    api.kernel.lanes.setConcurrency('cron', settings.maxConcurrentRuns);
    const storePath = settings.store
      ? isAbsolute(expandHome(settings.store))
        ? expandHome(settings.store)
        : resolve(api.kernel.paths.stateDir, expandHome(settings.store))
      : defaultStorePath(api.kernel.paths.stateDir);
    const store = new CronStore(storePath);
    let service: CronService | undefined;
    // Built on first use, so a CLI process that only lists plugins never reads jobs.json.
    const cron = (): CronService => {
      if (!service) {
        service = new CronService({
          store,
          runLog: new RunLog(store.runsDir, parseByteSize(settings.runLog.maxBytes), settings.runLog.keepLines),
          settings,
          runJob: createExecutor(api),
          logger: api.logger,
          emit: (event) => api.kernel.protocol.emit('cron', event),
          afterRun: async (job, entry) => {
            if (job.delivery?.mode !== 'webhook' || !job.delivery.to) return undefined;
            // As OpenClaw: an ok run with nothing to say posts nothing; errors always post.
            if (entry.status !== 'error' && !entry.summary?.trim())
              return { deliveryStatus: 'not-delivered', deliveryError: 'empty summary: nothing posted' };
            return postWebhook(guardedNet(api.kernel, 'cron webhooks'), job.delivery.to, entry, settings);
          },
        });
        service.load();
      }
      return service;
    };

    api.kernel.protocol.registerEvent('cron', api.id, {
      scope: 'operator.read',
      description:
        '{jobId, action: added|updated|removed|started|finished, runId?, status?, error?, summary?, runAtMs?, durationMs?, nextRunAtMs?, trigger?, catchUp?}',
    });
    registerCronMethods(api, cron);
    registerCronJobRead(api, cron);
    api.registerTool(cronTool(cron));
    api.registerService({
      id: 'cron',
      api: { service: cron },
      start: () => cron().start(),
      stop: () => service?.stop(),
    });
    for (const name of ['cron', 'automations']) {
      api.registerCli({
        name,
        description: 'Scheduled jobs: add, list, status, edit, rm, run, runs',
        run: cliCommand(CRON_HELP, (argv, ctx) => cronCommand(argv, ctx)),
      });
    }
  },
});
