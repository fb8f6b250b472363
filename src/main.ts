import type { AddressInfo } from 'node:net';
import { createApp } from '../api/app';
import type { ReadinessProbe } from '../api/deps';
import { deleteExpiredIdempotencyKeys } from '../api/idempotency-repository';
import type { AnyRoute } from '../api/route';
import { type RunningServer as RunningDevServer, startServer as startTemporalDevServer } from '../temporal-dev';
import { createCredentialKeeper, reconcileCredentialWorkflows } from './accounts/credential-workflow-client';
import { ConfigError, type Config, loadConfig } from './config';
import { createSealedBox } from './crypto/sealed-box';
import { applyPendingMigrations, connectDatabase } from './db/connect';
import { holdEmbeddedTemporalLock } from './db/single-herald';
import { createStdoutLogger, type Logger } from './logger';
import { historyDictionaries } from './temporal/history-dictionaries';
import { createHttpClient } from './net/http';
import { createPlatformAdapters } from './platforms/registry';
import { createPostsLifecycle } from './posts/cancel';
import { startPostChangeFeed } from './posts/change-feed';
import { startDatabaseNotifications } from './db/notifications';
import { startReconciler } from './posts/reconcile';
import { startEventDispatcher } from './webhooks/dispatcher';
import { startWebhookReconciler } from './webhooks/reconcile';
import { startEventRetention } from './events/retention';
import { removeOrphanedCopies } from './posts/media-cleanup';
import { createPostsRuntime } from './posts/runtime';
import { listenHttp } from './process/http-server';
import { runUntilStopped } from './process/run-until-stopped';
import { startMemoryRelease } from './process/memory-release';
import { registerSearchAttributes } from './temporal/search-attributes';
import { giveSearchAttributesToRunning } from './temporal/search-attributes-backfill';
import { announceWebUi, webUiBuildDir } from './temporal/web-ui';
import { startTemporal } from './temporal/worker';

/**
 * `npm start`: the whole service in one process. Embedded PostgreSQL when DATABASE_URL is unset, the embedded
 * Temporal dev server when TEMPORAL_ADDRESS is unset, the Temporal worker (task queue `herald`) and the HTTP API.
 * SIGTERM/SIGINT stop it in order: at once, stop accepting connections and stop the worker taking tasks, in-flight
 * requests and activities finishing within the shutdown budget; then the background work, the worker's connection,
 * the database pool and the embedded services. A signal during start-up ends the start after the step in progress
 * and undoes the steps taken (the embedded cluster is stopped); signals while stopping are ignored.
 */

export interface RunningHerald {
  url: string;
  /** The Temporal Web UI beside the embedded Temporal server, when it is on. */
  webUiUrl?: string;
  stop(): Promise<void>;
  /**
   * Settles, with what and why, only if Herald can no longer run as it should while it runs; `npm start` then stops
   * the process with exit code 1, for its supervisor to restart it:
   * - the Temporal worker failed (its workflow thread stopped, see `src/temporal/activation-watch.ts`, or its
   *   connection lost for good): the API would go on accepting posts that nothing publishes;
   * - the one-Herald lock was lost for good (`src/db/single-herald.ts`): a second Herald may run beside this one, each
   *   giving every post a workflow;
   * - the embedded PostgreSQL exited (started by this process or joined): every request and activity would fail
   *   until a restart.
   */
  failed: Promise<HeraldFailure>;
}

export interface HeraldFailure {
  message: string;
  err: unknown;
}

/**
 * Expired Idempotency-Key records and media copies no waiting post names are deleted this often (the burst limiter
 * cleans its own table).
 */
const housekeepingIntervalMs = 60 * 60 * 1000;

export async function startHerald(
  config: Config,
  logger: Logger,
  options: { routes?: readonly AnyRoute[]; signal?: AbortSignal } = {},
): Promise<RunningHerald> {
  // Checked after each step whose cleanup is registered: a step in progress is let finish, so what it started is
  // known and undone with the rest.
  const continueUnlessAborted = () => options.signal?.throwIfAborted();
  const cleanups: Array<() => Promise<void>> = [];
  let stopRequested = false;
  let fail!: (failure: HeraldFailure) => void;
  const failed = new Promise<HeraldFailure>((resolve) => (fail = resolve));
  // While running, the caller says what follows (npm start logs it as fatal and exits); while stopping, nothing does.
  const failsHerald = (message: string) => (err: unknown) => {
    if (stopRequested) logger.error({ err }, `while stopping: ${message}`);
    else fail({ message, err });
  };
  const stopAll = async () => {
    stopRequested = true;
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((err) => logger.error({ err }, 'error during shutdown'));
    }
  };
  try {
    // 20 connections: the API and the worker's local activities share the pool (a burst of due posts runs ~100 at once).
    const database = await connectDatabase(config, { logger, applicationName: 'herald-api', poolSize: 20, migrate: false });
    // Closing stops the embedded cluster this process started (the last to leave): that exit is the stop's own.
    let databaseClosing = false;
    cleanups.push(() => ((databaseClosing = true), database.close()));
    const databaseFailed = failsHerald('the embedded PostgreSQL exited: nothing can be read or recorded, so Herald stops (exit code 1)');
    void database.embedded?.exited.then((how) => databaseClosing || databaseFailed(new Error(`the embedded PostgreSQL server ${how}`)));
    continueUnlessAborted();
    // The lock before the migrations: a second start (after a `git pull`, say) is refused before it changes the schema
    // under the Herald that runs.
    const lock = config.temporal.address === null ? await holdEmbeddedTemporalLock(database.url, { logger }) : undefined;
    if (lock) {
      cleanups.push(() => lock.release());
      void lock.lost.then(failsHerald('the one-Herald lock was lost: another Herald may run on this database, so this one stops (exit code 1)'));
    }
    await applyPendingMigrations(database.handle, logger);
    continueUnlessAborted();

    // Platform adapters and the credentials box, built once; the API verifies connections with them.
    if (!config.encryptionKey) throw new ConfigError('Invalid configuration: HERALD_ENCRYPTION_KEY is required');
    const sealedBox = createSealedBox(config.encryptionKey);
    const platformHttp = createHttpClient({ allowInsecure: config.allowInsecureUrls });
    cleanups.push(() => platformHttp.close());
    const adapters = createPlatformAdapters({ http: platformHttp, platformUrls: config.platformUrls, allowInsecureUrls: config.allowInsecureUrls });

    let temporalAddress = config.temporal.address;
    let webUiUrl: string | undefined;
    let devServer: RunningDevServer | undefined;
    if (temporalAddress === null) {
      const { webUi } = config;
      const http = webUi.enabled ? { port: webUi.port, host: webUi.host, staticDir: webUiBuildDir } : undefined;
      const server = await startTemporalDevServer({ port: 0, namespace: config.temporal.namespace, http, historyDictionaries: historyDictionaries() }).catch((err) => {
        if (http && (err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
          throw new ConfigError(`Temporal Web UI: ${webUi.host}:${webUi.port} is in use (set HERALD_WEB_UI_PORT, or HERALD_WEB_UI=false)`);
        }
        throw err;
      });
      devServer = server;
      cleanups.push(() => server.close());
      continueUnlessAborted();
      temporalAddress = server.address;
      logger.info({ address: temporalAddress }, 'embedded Temporal dev server started');
      // Where `herald posts stuck` finds this Herald's workflows (it runs in another process).
      await lock?.announce(temporalAddress);
      webUiUrl = server.httpUrl;
      if (webUiUrl) {
        const uiBuild = new AbortController();
        cleanups.push(async () => uiBuild.abort());
        announceWebUi(webUiUrl, logger, uiBuild.signal);
      }
    }
    // One LISTEN connection for the process: post changes answer immediate publishes, key changes keep the key cache.
    // The worker tells the same feed what it records, so an immediate publish here is answered without a read.
    const notifications = startDatabaseNotifications(database.handle.url, logger);
    cleanups.push(() => notifications.close());
    const changes = startPostChangeFeed(notifications);
    // In-flight activities and requests share the shutdown budget from the signal on; its last 5 s are for the rest.
    const drainMs = Math.max(1_000, config.shutdownTimeoutMs - 5_000);
    const temporal = await startTemporal(
      temporalAddress,
      config.temporal.namespace,
      { config, db: database.handle.db, logger, posts: { adapters, sealedBox, http: platformHttp, changes } },
      { shutdownGraceMs: drainMs },
    );
    cleanups.push(() => temporal.shutdown());
    continueUnlessAborted();
    devServer?.useHistoryDictionaries(historyDictionaries(temporal.worker.options.buildId));
    // Once registered, the running workflows started without them (while it was refused) are given them.
    const backfillStopping = new AbortController();
    const searchAttributes = await registerSearchAttributes(temporal.client, config.temporal.namespace, logger, undefined, () =>
      giveSearchAttributesToRunning(temporal.client, database.handle.db, logger, backfillStopping.signal),
    );
    cleanups.push(async () => {
      searchAttributes.stop();
      backfillStopping.abort();
    });
    continueUnlessAborted();
    temporal.running.catch(failsHerald('the Temporal worker failed: nothing would publish, so Herald stops (exit code 1)'));

    // Posts: one runtime for the API side; every post that needs a workflow gets one now and is watched every minute.
    const posts = createPostsRuntime({ config, db: database.handle.db, logger, temporal: temporal.client }, { adapters, sealedBox, http: platformHttp, changes });
    const reconciler = startReconciler(posts);
    // Every account whose credential ends gets its workflow back (the embedded Temporal forgets it on restart).
    const credentialKeeper = createCredentialKeeper(temporal.client, posts.taskQueue);
    const credentialsStopping = new AbortController();
    const credentialReconcile = reconcileCredentialWorkflows(database.handle.db, credentialKeeper, logger, credentialsStopping.signal).catch((err) =>
      logger.error({ err }, 'credential reconcile at start failed'),
    );
    cleanups.push(async () => {
      credentialsStopping.abort();
      await credentialReconcile;
    });
    cleanups.push(() => reconciler.stop());
    // Webhooks: new events become delivery workflows (src/webhooks/dispatcher.ts); deliveries the memory-only Temporal
    // forgot get theirs back, resuming their retry schedules (src/webhooks/reconcile.ts).
    const webhookDeps = { db: database.handle.db, temporal: temporal.client, taskQueue: posts.taskQueue, logger };
    const dispatcher = startEventDispatcher(webhookDeps);
    cleanups.push(() => dispatcher.stop());
    const webhookReconciler = startWebhookReconciler(webhookDeps);
    cleanups.push(() => webhookReconciler.stop());
    const retention = startEventRetention(database.handle.db, logger);
    cleanups.push(async () => retention.stop());

    const probes: ReadinessProbe[] = [
      { name: 'temporal', check: async () => void (await temporal.client.workflowService.getSystemInfo({})) },
      {
        name: 'worker',
        check: async () => {
          const state = temporal.worker.getState();
          if (state !== 'RUNNING') throw new Error(`worker is ${state}`);
        },
      },
    ];
    const app = createApp(
      {
        config,
        db: database.handle.db,
        pool: database.handle.pool,
        logger,
        probes,
        temporal: temporal.client,
        adapters,
        sealedBox,
        accountLifecycle: createPostsLifecycle(posts),
        credentialKeeper,
        posts,
        keyCache: { notifications },
      },
      options.routes,
    );
    const http = await listenHttp(app, config.port, config.host);
    const { server } = http;
    let serverClosing: Promise<void> | undefined;
    const closeServerOnce = () => (serverClosing ??= http.close(drainMs, logger));
    cleanups.push(closeServerOnce);
    const housekeeping = setInterval(() => {
      deleteExpiredIdempotencyKeys(database.handle.db).catch((err) => logger.warn({ err }, 'idempotency cleanup failed'));
      removeOrphanedCopies(database.handle.db).catch((err) => logger.warn({ err }, 'media copies cleanup failed'));
    }, housekeepingIntervalMs);
    housekeeping.unref();
    cleanups.push(async () => clearInterval(housekeeping));
    // What a burst of scheduling leaves resident is given back once the process is quiet again (README "Memory").
    const memoryRelease = startMemoryRelease(logger);
    cleanups.push(async () => memoryRelease.stop());
    const { port } = server.address() as AddressInfo;
    const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
    logger.info({ url, port, temporal: temporalAddress, embeddedPostgres: database.embedded !== null }, 'herald listening');
    // A signal during the listen or after the last check would otherwise be lost: the start must end here too.
    continueUnlessAborted();
    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopRequested = true;
      // At once and together, so neither waits on the other: the worker takes no new task (its in-flight activities
      // finish within `drainMs`), and the listener takes no new connection (its requests get as long). Then the rest,
      // in reverse order of start: the reconcilers end before the worker's connection, the pool before PostgreSQL.
      return (stopping ??= (async () => {
        temporal.stopPolling();
        await closeServerOnce().catch((err) => logger.error({ err }, 'error during shutdown'));
        await stopAll();
      })());
    };
    return { url, webUiUrl, stop, failed };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createStdoutLogger(config.logLevel);
  // Allowed, not refused: the benches run production mode against stand-ins on this machine (README "Running and
  // operating"). Said at every start so that a production deployment that set it by mistake shows it.
  if (config.env === 'production' && config.allowInsecureUrls) {
    logger.warn('HERALD_ALLOW_INSECURE_URLS is on with NODE_ENV=production: plain-http and private addresses are accepted for platforms and media (meant for development, tests and benches only)');
  }
  await runUntilStopped((signal) => startHerald(config, logger, { signal }), { shutdownTimeoutMs: config.shutdownTimeoutMs, logger });
}

if (require.main === module) {
  void main();
}
