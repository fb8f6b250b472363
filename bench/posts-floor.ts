// The floor of a workflow-backed publish for `bench/posts.ts` (issue 15): what this stack costs before Herald adds
// anything. One process holds a node:http server, a Temporal worker and a client on the worker's connection (eager
// start, as Herald's API and worker); temporal-dev and PostgreSQL are the same as Herald's. A request inserts the row
// `publishing` (as the bare handler does), starts `floorPublish` eagerly and answers with its result; the workflow's
// one local activity marks the attempt (the conditional update Herald's exactly-once rests on, no insert), makes the
// same x adapter call and records the outcome. No Express, no auth, no quota, no change feed, no search attributes.
import http from 'node:http';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { PlatformAdapter, PlatformContext } from '../src/platforms/types';
import { openDatabase } from '../src/db';
import { bundleWorkflowsInChild } from '../src/temporal/workflow-bundle';
import { activationLimitMs, watchedWorkerClass } from '../src/temporal/activation-watch';

export interface FloorActivities {
  publishFloor(postId: string, text: string): Promise<void>;
}

interface FloorDeps {
  databaseUrl: string;
  temporalAddress: string;
  accountId: string;
  x: PlatformAdapter;
  ctx: PlatformContext;
  /**
   * The SDK's own Worker (a `vm` watchdog thread per call into the workflow sandbox); otherwise Herald's, which runs
   * without it and watches activations from the main thread (src/temporal/activation-watch.ts).
   */
  sdkWatchdog: boolean;
}

export async function startFloor(deps: FloorDeps): Promise<http.Server> {
  const { pool } = openDatabase(deps.databaseUrl, { max: 40, applicationName: 'bench-floor' });
  const { rows } = await pool.query<{ user_id: string }>('select user_id from accounts where id = $1', [deps.accountId]);
  const userId = rows[0]!.user_id;
  const activities: FloorActivities = {
    async publishFloor(postId, text) {
      const marked = await pool.query(`update posts set publish_attempt_started_at = now() where id = $1 and status = 'publishing' returning id`, [postId]);
      if (marked.rowCount !== 1) throw new Error(`post ${postId} is not publishing`);
      const published = await deps.x.publish(deps.ctx, { postId, text, media: [] });
      await pool.query(`update posts set status = 'published', platform_post_id = $2, platform_post_url = $3 where id = $1`, [postId, published.platformPostId, published.url]);
    },
  };
  Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: deps.temporalAddress, grpcCompression: { codec: 'none' } });
  const client = new Client({ connection });
  const taskQueue = `floor-${process.pid}`;
  const onBlocked = (blocked: unknown) => console.error('floor: a workflow activation is blocked', blocked);
  const workerClass = deps.sdkWatchdog ? Worker : watchedWorkerClass({ limitMs: activationLimitMs, onBlocked });
  const worker = await workerClass.create({
    connection,
    taskQueue,
    workflowBundle: await bundleWorkflowsInChild(require.resolve('./floor-workflow')),
    activities,
  });
  void worker.run();
  process.on('disconnect', () => {
    worker.shutdown();
    process.exit(0);
  });

  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      try {
        const { text } = JSON.parse(Buffer.concat(chunks).toString()) as { text: string };
        const inserted = await pool.query<{ id: string }>(
          `insert into posts (user_id, account_id, platform, text, status) values ($1, $2, 'x', $3, 'publishing') returning id`,
          [userId, deps.accountId, text],
        );
        const id = inserted.rows[0]!.id;
        await client.workflow.execute('floorPublish', { workflowId: `floor-${id}`, taskQueue, args: [id, text], requestEagerStart: true });
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { id } }));
      } catch (err) {
        res.writeHead(500).end(String(err));
      }
    });
  });
}
