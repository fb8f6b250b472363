/**
 * One posts test file's world: a time-skipping Temporal environment (temporal-dev), the eight platform stand-ins with
 * the real adapters pointed at them, the real test database, one worker with the real activities on a task queue of
 * its own, and the real API on top. The API's clock follows the environment's (time skipping moves it).
 *
 *   const h = await startPostsHarness({ plan })     (in `before`; `h.stop()` in `after`)
 *   h.api.request(...), h.standIns.x, h.env, h.db
 *   await h.syncClock()        before a request whose rules read "now" after time was skipped
 *   await h.settle(postId)     waits for the post's workflow (or its group's) to end (time skips while waiting)
 *   startPostsHarness({ database })   API and worker on another handle of the test database (e.g. counting statements)
 *   await activitiesOf(h, workflowId)   the activities (local and regular) a workflow ran, in order
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createActivities } from '../../activities';
import type { Config } from '../../src/config';
import { createLogger } from '../../src/logger';
import type { PlanName } from '../../src/plans';
import { createPostsLifecycle } from '../../src/posts/cancel';
import { createMediaStore } from '../../src/media/store';
import { startPostChangeFeed } from '../../src/posts/change-feed';
import { startDatabaseNotifications } from '../../src/db/notifications';
import { createPostsRuntime, type PostsRuntime, type PostsRuntimeOverrides } from '../../src/posts/runtime';
import { postWorkflowId } from '../../src/posts/workflow-client';
import { heraldWorkerClass } from '../../src/temporal/worker';
import { startApi, testConfig, type TestApi } from '../helpers/api';
import { testDatabase, type TestDatabase } from '../helpers/db';
import { startPlatformStandIns, type PlatformStandIns } from '../helpers/platform-standins';
import { createTimeSkippingEnv } from '../helpers/temporal';
import { testSealedBox } from './fixtures';

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
/** The workflow bundle, built once per mocha process. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: quietBundlerLogger });
  return bundle;
}

const quietBundlerLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (message: string, meta?: unknown) => console.error(message, meta),
  log: () => undefined,
};

export interface PostsHarness {
  env: TestWorkflowEnvironment;
  standIns: PlatformStandIns;
  api: TestApi;
  db: TestApi['deps']['db'];
  taskQueue: string;
  /** The worker's build id, in every workflow task it completes (as Herald's main gives it to temporal-dev's dictionaries). */
  workerBuildId: string;
  /** The time the API reads as now (the environment's, refreshed by `syncClock`). */
  now(): Date;
  syncClock(): Promise<void>;
  settle(postId: string): Promise<unknown>;
  /** A posts runtime as the reconciler of a restarted process has it: the test client, no change feed. */
  reconcilerRuntime(): PostsRuntime;
  stop(): Promise<void>;
}

/**
 * `taskQueue`: the queue of the harness's own worker and of its posts (production's name where a test records
 * histories as Herald makes them); `posts.taskQueue` alone moves only the posts, to workers a test starts itself.
 */
export async function startPostsHarness(options: { plan?: PlanName; posts?: PostsRuntimeOverrides; config?: Config; database?: TestDatabase; taskQueue?: string } = {}): Promise<PostsHarness> {
  const env = await createTimeSkippingEnv();
  const standIns = await startPlatformStandIns();
  // `database`: the same test database through a handle of the test's own (one that counts statements, say).
  const database = options.database ?? (await testDatabase());
  const taskQueue = options.taskQueue ?? `posts-test-${randomUUID()}`;
  let clock = await env.currentTimeMs();
  const now = () => new Date(clock);
  const config = options.config ?? testConfig();
  const logger = createLogger('silent');
  const notifications = startDatabaseNotifications(database.url, logger);
  const changes = startPostChangeFeed(notifications);
  const posts: PostsRuntimeOverrides = { taskQueue, adapters: standIns.adapters, sealedBox: testSealedBox, now, changes, ...options.posts };
  // Herald's own worker class, as production runs it (its workflow thread, the activation watch).
  const worker = await heraldWorkerClass(createLogger('error')).create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createActivities({ config, db: database.db, logger, posts }),
  });
  const running = worker.run();
  // The API gets a plain client: the time-skipping client's result() locks time skipping and cannot be awaited many
  // times at once (parallel requests would unbalance it). Time skips only where a test says so (`settle`, `env.sleep`).
  // Built on the worker's connection, as in production, so immediate posts start eagerly.
  const apiClient = new Client({ connection: env.nativeConnection, namespace: env.namespace });
  const api = await startApi({
    database,
    plan: options.plan ?? 'free',
    deps: {
      config,
      temporal: apiClient,
      adapters: standIns.adapters,
      sealedBox: testSealedBox,
      posts,
      accountLifecycle: createPostsLifecycle({ db: database.db, mediaStore: createMediaStore(database.db as never), temporal: apiClient, logger }),
    },
  });
  return {
    env,
    standIns,
    api,
    db: database.db,
    taskQueue,
    workerBuildId: worker.options.buildId ?? '',
    now,
    syncClock: async () => {
      clock = await env.currentTimeMs();
    },
    reconcilerRuntime: () =>
      createPostsRuntime(
        { config: testConfig(), db: database.db, logger: createLogger('silent'), temporal: env.client },
        { taskQueue, adapters: standIns.adapters, sealedBox: testSealedBox },
      ),
    settle: async (postId) => {
      // An immediate fan-out's posts share their group's workflow, whose result holds each post's outcome.
      const row = await database.db.selectFrom('posts').select('workflow_id').where('id', '=', postId).executeTakeFirst();
      const result = await env.client.workflow.getHandle(row?.workflow_id ?? postWorkflowId(postId)).result();
      clock = await env.currentTimeMs();
      return row?.workflow_id ? (result as Record<string, unknown>)[postId] : result;
    },
    stop: async () => {
      await api.close();
      await notifications.close();
      worker.shutdown();
      await running;
      await standIns.stop();
      await env.teardown();
    },
  };
}

/** The activities as the harness's worker has them, for tests that call one directly (no task queue, no workflow). */
export function harnessActivities(h: Pick<PostsHarness, 'db' | 'standIns' | 'now'>): ReturnType<typeof createActivities> {
  return createActivities({ config: testConfig(), db: h.db, logger: createLogger('silent'), posts: { adapters: h.standIns.adapters, sealedBox: testSealedBox, now: h.now } });
}

/**
 * The activities a workflow ran, in order: local ones from their `MarkerRecorded` events (sdk-core's marker details),
 * regular ones from `ActivityTaskScheduled`.
 */
export async function activitiesOf(h: Pick<PostsHarness, 'env'>, workflowId: string): Promise<string[]> {
  const history = await h.env.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (scheduled) return [scheduled];
    if (e.markerRecordedEventAttributes?.markerName !== 'core_local_activity') return [];
    const data = e.markerRecordedEventAttributes.details!.data!.payloads![0]!.data!;
    return [(JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type: string }).activity_type];
  });
}

/**
 * Ends a scheduled post's workflow once its first workflow task has completed (it waits on its timer), for tests that
 * call the post's activities themselves. Ended earlier, a task still in flight in the worker goes on running its local
 * activities against the row (the server refuses only its completion): that run once marked the row between a test's
 * claim and its record.
 */
export async function endWaitingWorkflow(h: Pick<PostsHarness, 'env'>, workflowId: string): Promise<void> {
  const handle = h.env.client.workflow.getHandle(workflowId);
  const deadline = Date.now() + 60_000;
  while (!(await handle.fetchHistory()).events?.some((event) => event.timerStartedEventAttributes)) {
    if (Date.now() > deadline) throw new Error(`${workflowId} never started waiting on a timer`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await handle.terminate('the test calls the activities itself');
}
