import type { Config } from '../config';
import type { Logger } from '../logger';
import { type EmbeddedCluster, ensureDatabase, startEmbeddedPostgres } from './embedded';
import { type DatabaseHandle, openDatabase } from './index';
import { migrateToLatest } from './migrate';

const embeddedDatabaseName = 'herald';

export interface Connected {
  handle: DatabaseHandle;
  url: string;
  /** Set when the embedded cluster is used (whether this process started it or found it running). */
  embedded: EmbeddedCluster | null;
  /** Closes the pool, then stops the embedded cluster unless another client is connected to it (`EmbeddedCluster.leave`). */
  close(): Promise<void>;
}

/**
 * The database `npm start` and `herald` share: DATABASE_URL when set, else the embedded cluster under the data dir
 * (started here when not already running). Migrations are applied unless `migrate: false`.
 */
export async function connectDatabase(
  config: Config,
  options: { logger?: Logger; migrate?: boolean; poolSize?: number; applicationName?: string } = {},
): Promise<Connected> {
  let embedded: EmbeddedCluster | null = null;
  let url = config.databaseUrl;
  if (url === null) {
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort, logger: options.logger, shared: true });
    try {
      await ensureDatabase(embedded.url('postgres'), embeddedDatabaseName);
    } catch (err) {
      await embedded.leave();
      throw err;
    }
    url = embedded.url(embeddedDatabaseName);
  }
  const handle = openDatabase(url, { max: options.poolSize, applicationName: options.applicationName });
  const close = async () => {
    await handle.close();
    await embedded?.leave();
  };
  try {
    if (options.migrate !== false) await applyPendingMigrations(handle, options.logger);
  } catch (err) {
    await close();
    throw err;
  }
  return { handle, url, embedded, close };
}

/** Applies the pending migrations, saying which (`npm start` does it itself, once it holds the one-Herald lock). */
export async function applyPendingMigrations(handle: DatabaseHandle, logger: Logger | undefined): Promise<void> {
  const applied = await migrateToLatest(handle.db);
  if (applied.length > 0) logger?.info({ applied }, 'migrations applied');
}
