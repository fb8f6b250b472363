import type { Config } from '../src/config';
import type { Db } from '../src/db';
import type { Logger } from '../src/logger';
import { createPostsRuntime, type PostsRuntimeOverrides } from '../src/posts/runtime';
import { createCommentSyncActivities } from './comments-sync';
import { createCredentialActivities } from './credentials';
import { createPostActivities } from './posts';
import { createThreadActivities } from './threads';
import { createHeldThreadActivities } from './threads-held';
import { createWebhookActivities, type WebhookActivityDeps } from './webhooks';
import { notingStart } from './send-stop';

/** What activities may use; built once by the worker process. Features add optional members. */
export interface ActivityDeps {
  config: Config;
  db: Db;
  logger: Logger;
  /** Posts: adapters, media store, clock... built from `config` when absent (tests pass stand-in adapters). */
  posts?: PostsRuntimeOverrides;
  /** Webhook delivery: sealed box and guarded HTTP client; the posts runtime's when absent. */
  webhooks?: Partial<Pick<WebhookActivityDeps, 'sealedBox' | 'http'>>;
}

/**
 * The activities of the `herald` task queue. Workflows type their proxies with `ReturnType<typeof createActivities>`.
 * Features add their activities to the object returned here. Each notes its start as it begins (`notingStart`): a
 * platform call's creates stop before its time limit from there (`activities/send-stop.ts`).
 */
export function createActivities(deps: ActivityDeps) {
  const postsRuntime = createPostsRuntime(deps, deps.posts);
  return notingStart({
    ...createPostActivities(postsRuntime),
    ...createThreadActivities(postsRuntime),
    ...createHeldThreadActivities(postsRuntime),
    ...createCommentSyncActivities(postsRuntime),
    ...createCredentialActivities(postsRuntime),
    ...createWebhookActivities({
      db: deps.db,
      logger: deps.logger,
      sealedBox: deps.webhooks?.sealedBox ?? postsRuntime.sealedBox,
      http: deps.webhooks?.http ?? postsRuntime.http,
    }),
  });
}
