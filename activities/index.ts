import type { Config } from '../src/config';
import type { Db } from '../src/db';
import type { Logger } from '../src/logger';

/** What activities may use; built once by the worker process. Features add optional members. */
export interface ActivityDeps {
  config: Config;
  db: Db;
  logger: Logger;
}

/**
 * The activities of the `herald` task queue. Workflows type their proxies with `ReturnType<typeof createActivities>`.
 * Features add their activities to the object returned here.
 */
export function createActivities(deps: ActivityDeps) {
  void deps;
  return {};
}
