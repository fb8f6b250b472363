import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type { PoolClient } from 'pg';
import type { AccountRow } from '../../src/db/tables/accounts';
import { createLogger } from '../../src/logger';
import { startEventDispatcher, webhookWorkflowId } from '../../src/webhooks/dispatcher';
import { insertMastodonAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/**
 * README "Events and webhooks": the dispatcher's `stop()` waits for a run in progress (bounded), so a shutdown that
 * closes the database next does not close it under a run still writing. A run is held in progress here by a lock on
 * `webhook_dispatches` that another connection takes: its insert waits for it, as it would for a slow database.
 */
describe('Event dispatcher: stop() waits for the run in progress', function () {
  this.timeout(180_000);
  let h: PostsHarness;
  let receiver: Server;
  let account: AccountRow;
  let endpointId: string;

  before(async () => {
    h = await startPostsHarness();
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const res = await h.api.request('POST', '/api/v1/webhooks', { body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` } });
    assert.equal(res.status, 201, res.text);
    endpointId = res.body.data.id;
    account = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
  });
  after(async () => {
    receiver?.closeAllConnections();
    receiver?.close();
    await h?.stop();
  });

  const deps = () => ({ db: h.db, temporal: h.env.client, taskQueue: h.taskQueue, logger: createLogger('silent') });
  /** A published post's `post.published` event, not yet dispatched. */
  const newEvent = async (text: string) => {
    const post = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text } });
    assert.equal(post.status, 201, post.text);
    return h.db.selectFrom('events').select('id').where('type', '=', 'post.published').where(sql`data->>'id'`, '=', post.body.data.id).executeTakeFirstOrThrow();
  };
  const dispatchedAt = async (eventId: string) => (await h.db.selectFrom('events').select('dispatched_at').where('id', '=', eventId).executeTakeFirstOrThrow()).dispatched_at;
  /** Takes the lock every dispatch's insert waits for; `release()` commits it. */
  const holdDispatches = async () => {
    const client: PoolClient = await h.api.deps.pool.connect();
    await client.query('begin');
    await client.query('lock table webhook_dispatches in exclusive mode');
    return {
      release: async () => {
        await client.query('commit');
        client.release();
      },
    };
  };
  const waitersOnDispatches = async () =>
    Number((await h.api.deps.pool.query(`select count(*) as n from pg_locks where not granted and relation = 'webhook_dispatches'::regclass`)).rows[0].n);
  const until = async (what: string, check: () => Promise<boolean>) => {
    for (const deadline = Date.now() + 60_000; !(await check()); ) {
      if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('returns only once the run has committed its dispatches and started their deliveries; no run starts after it', async () => {
    const event = await newEvent('dispatched before the stop returns');
    const lock = await holdDispatches();
    const dispatcher = startEventDispatcher(deps(), 20);
    await until('the run waits on the lock', async () => (await waitersOnDispatches()) > 0);

    let stopped = false;
    const stopping = dispatcher.stop(120_000).then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(stopped, false, 'stop() returned while the run was still writing');
    await lock.release();
    await stopping;

    assert.ok(await dispatchedAt(event.id), 'the run marked its event dispatched before stop() returned');
    const rows = await h.db.selectFrom('webhook_dispatches').select('endpoint_id').where('event_id', '=', event.id).execute();
    assert.deepEqual(rows, [{ endpoint_id: endpointId }]);
    const described = await h.env.client.workflow.getHandle(webhookWorkflowId(event.id, endpointId)).describe();
    assert.equal(described.type, 'deliverWebhook', 'its delivery was started before stop() returned');

    const later = await newEvent('after the stop');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(await dispatchedAt(later.id), null, 'a stopped dispatcher runs no more');
  });

  it('gives up after its bound while the run is still held, and returns', async () => {
    const event = await newEvent('held past the bound');
    const lock = await holdDispatches();
    const dispatcher = startEventDispatcher(deps(), 20);
    try {
      await until('the run waits on the lock', async () => (await waitersOnDispatches()) > 0);
      await dispatcher.stop(50);
      assert.ok((await waitersOnDispatches()) > 0, 'the run is still waiting: stop() returned on its bound');
      assert.equal(await dispatchedAt(event.id), null);
    } finally {
      await lock.release();
    }
    // The run carries on to its end (nothing is left half-written).
    await until('the held run finished', async () => (await dispatchedAt(event.id)) !== null);
  });
});
