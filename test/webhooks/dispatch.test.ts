import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { recordEvents } from '../../src/events/outbox';
import { createLogger } from '../../src/logger';
import { claimEvents, dispatchEvents, webhookWorkflowId } from '../../src/webhooks/dispatcher';
import { reconcileWebhookDeliveries } from '../../src/webhooks/reconcile';
import { insertMastodonAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

describe('Event dispatcher: outbox rows become delivery workflows, once, across restarts', function () {
  this.timeout(180_000);
  let h: PostsHarness;
  let receiver: Server;
  let base: string;
  const received: Array<{ path: string; id: string }> = [];
  // `/recovering` fails (500) until a test says it is fixed.
  let recoveringFails = true;

  before(async () => {
    h = await startPostsHarness();
    receiver = createServer((req, res) => {
      received.push({ path: req.url ?? '', id: String(req.headers['webhook-id']) });
      req.resume();
      req.on('end', () => {
        if (req.url?.startsWith('/failing') || (req.url?.startsWith('/recovering') && recoveringFails)) res.statusCode = 500;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  after(async () => {
    receiver?.closeAllConnections();
    receiver?.close();
    await h?.stop();
  });

  const deps = () => ({ db: h.db, temporal: h.env.client, taskQueue: h.taskQueue, logger: createLogger('silent') });
  const endpoint = async (path: string, extra: Record<string, unknown> = {}, key?: string) => {
    const res = await h.api.request('POST', '/api/v1/webhooks', { body: { url: `${base}${path}`, ...extra }, key });
    assert.equal(res.status, 201, res.text);
    return res.body.data.id as string;
  };

  it('starts one delivery per subscribed, enabled endpoint of the event\'s user; a dispatcher that died before starting it, or whose mark was lost, starts nothing twice', async () => {
    const all = await endpoint('/all');
    const failedOnly = await endpoint('/failed-only', { events: ['post.failed'] });
    const off = await endpoint('/off');
    await h.api.request('PATCH', `/api/v1/webhooks/${off}`, { body: { enabled: false } });
    const stranger = await h.api.newUser();
    const strangers = await endpoint('/stranger', {}, stranger.apiKey);

    const account = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    const post = await h.api.request('POST', '/api/v1/posts', { body: { account_id: account.id, text: 'dispatched' } });
    assert.equal(post.status, 201, post.text);
    const event = await h.db.selectFrom('events').selectAll().where('user_id', '=', h.api.userId).where('type', '=', 'post.published').executeTakeFirstOrThrow();

    // A previous dispatcher recorded this event's deliveries, then died before starting them: the reconciler does.
    // Batches of 100 in id order: the run's shared database may hold more undispatched events of earlier tests.
    const dispatchedAt = async () => (await h.db.selectFrom('events').select('dispatched_at').where('id', '=', event.id).executeTakeFirstOrThrow()).dispatched_at;
    const claimed: Array<{ event_id: string; endpoint_id: string }> = [];
    while (!(await dispatchedAt())) {
      const batch = await claimEvents(h.db, 100);
      assert.ok(batch.events > 0, 'the event is claimed before the outbox is empty');
      claimed.push(...batch.deliveries);
    }
    assert.deepEqual(claimed.filter((d) => d.event_id === event.id), [{ event_id: event.id, endpoint_id: all }]);
    while ((await dispatchEvents(deps())) > 0);
    assert.ok((await reconcileWebhookDeliveries(deps(), 'all')).checked >= 1);
    await reconcileWebhookDeliveries(deps(), 'all'); // twice: the same workflow, not a second one
    assert.equal(await h.env.client.workflow.getHandle(webhookWorkflowId(event.id, all)).result(), 'delivered');
    const dispatch = await h.db.selectFrom('webhook_dispatches').selectAll().where('event_id', '=', event.id).executeTakeFirstOrThrow();
    assert.ok(dispatch.settled_at, 'settled once delivered');
    await reconcileWebhookDeliveries(deps(), 'all');
    assert.equal(await h.env.client.workflow.getHandle(webhookWorkflowId(event.id, all)).result(), 'delivered', 'a settled delivery is not started again');

    // And once more, as if the mark had been lost after the delivery finished.
    await h.db.updateTable('events').set({ dispatched_at: null }).where('id', '=', event.id).execute();
    while ((await dispatchEvents(deps())) > 0);
    await h.env.sleep(60_000);
    assert.deepEqual(received.filter((r) => r.id === event.id), [{ path: '/all', id: event.id }]);
    for (const other of [failedOnly, off, strangers]) {
      await assert.rejects(h.env.client.workflow.getHandle(webhookWorkflowId(event.id, other)).describe(), (err: Error) => err.name === 'WorkflowNotFoundError');
    }
  });

  it('/test sends a webhook.test to that endpoint; /redeliver sends an event again with its webhook-id; /deliveries lists the attempts', async () => {
    const id = await endpoint('/manual', { events: ['post.failed'] });
    const tested = await h.api.request('POST', `/api/v1/webhooks/${id}/test`);
    assert.equal(tested.status, 202, tested.text);
    assert.equal(tested.body.data.type, 'webhook.test');
    assert.equal(await h.env.client.workflow.getHandle(webhookWorkflowId(tested.body.data.id, id)).result(), 'delivered');

    const event = await h.db.selectFrom('events').select('id').where('user_id', '=', h.api.userId).where('type', '=', 'post.published').executeTakeFirstOrThrow();
    const again = await h.api.request('POST', `/api/v1/webhooks/${id}/redeliver`, { body: { event_id: event.id } });
    assert.equal(again.status, 202, again.text);
    for (let i = 0; i < 50 && !received.some((r) => r.path === '/manual' && r.id === event.id); i += 1) await h.env.sleep(1_000);
    assert.deepEqual(received.filter((r) => r.path === '/manual').map((r) => r.id), [tested.body.data.id, event.id]);

    const deliveries = await h.api.request('GET', `/api/v1/webhooks/${id}/deliveries`);
    assert.equal(deliveries.status, 200, deliveries.text);
    assert.deepEqual(deliveries.body.data.map((d: { event_id: string; status_code: number; delivered: boolean }) => [d.event_id, d.status_code, d.delivered]), [[event.id, 200, true], [tested.body.data.id, 200, true]]);
    assert.deepEqual(Object.keys(deliveries.body.data[0]).sort(), ['attempted_at', 'delivered', 'duration_ms', 'error', 'event_id', 'id', 'status_code']);
    assert.equal(deliveries.body.meta.has_more, false);

    const stranger = await h.api.newUser();
    for (const [method, path, body] of [
      ['POST', `/api/v1/webhooks/${id}/test`, undefined],
      ['POST', `/api/v1/webhooks/${id}/redeliver`, { event_id: event.id }],
      ['GET', `/api/v1/webhooks/${id}/deliveries`, undefined],
    ] as const) {
      const res = await h.api.request(method, path, { key: stranger.apiKey, body });
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
    }
    const theirs = await endpoint('/theirs', {}, stranger.apiKey);
    const foreign = await h.api.request('POST', `/api/v1/webhooks/${theirs}/redeliver`, { key: stranger.apiKey, body: { event_id: event.id } });
    assert.equal(foreign.status, 404, 'another user\'s event cannot be sent to your endpoint');
    const reader = await h.api.newUser('free', ['webhooks:read']);
    assert.equal((await h.api.request('POST', `/api/v1/webhooks/${id}/test`, { key: reader.apiKey })).status, 403);
  });

  it('/test and /redeliver to a switched-off endpoint are 400 bad_request (the catalogue has no code of its own for it), saying how to switch it on; nothing is written or sent', async () => {
    const userOff = await endpoint('/switched-off');
    assert.equal((await h.api.request('PATCH', `/api/v1/webhooks/${userOff}`, { body: { enabled: false } })).status, 200);
    const heraldOff = await endpoint('/gone');
    await h.db.updateTable('webhook_endpoints').set({ enabled: false, disabled_reason: 'The endpoint answered 410 Gone' }).where('id', '=', heraldOff).execute();
    const [event] = await h.db.transaction().execute((trx) => recordEvents(trx, [{ userId: h.api.userId, type: 'post.published', data: { id: 'p' }, request: null }]));
    const testEvents = async () => Number((await h.db.selectFrom('events').select((eb) => eb.fn.countAll<string>().as('n')).where('type', '=', 'webhook.test').executeTakeFirstOrThrow()).n);
    const testsBefore = await testEvents();

    for (const [id, why] of [[userOff, ''], [heraldOff, ' (The endpoint answered 410 Gone)']]) {
      for (const [path, body] of [['test', undefined], ['redeliver', { event_id: event.id }]] as const) {
        const res = await h.api.request('POST', `/api/v1/webhooks/${id}/${path}`, { body });
        assert.equal(res.status, 400, `${path}: ${res.text}`);
        assert.deepEqual(res.body.error, {
          code: 'bad_request',
          message: `Webhook endpoint ${id} is disabled${why}, so nothing would be delivered to it; switch it back on with PATCH /api/v1/webhooks/${id} { "enabled": true }`,
        });
      }
    }
    const missingEvent = await h.api.request('POST', `/api/v1/webhooks/${userOff}/redeliver`, { body: { event_id: 'evt_missing' } });
    assert.equal(missingEvent.status, 404, 'an event that does not exist is still 404');
    assert.equal(await testEvents(), testsBefore, 'no webhook.test event was written');
    const attempts = await h.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', 'in', [userOff, heraldOff]).execute();
    assert.deepEqual([attempts.length, received.filter((r) => r.path === '/switched-off' || r.path === '/gone').length], [0, 0]);

    const doc = await h.api.request('GET', '/api/v1/openapi.json');
    for (const path of ['/api/v1/webhooks/{id}/test', '/api/v1/webhooks/{id}/redeliver']) {
      assert.equal(doc.body.paths[path].post.responses['409'], undefined, path);
      assert.match(doc.body.paths[path].post.responses['400'].description, /bad_request/, path);
    }
  });

  it('/redeliver and /test while the same delivery is still being tried join it (already_in_flight: true) and send nothing more', async () => {
    const id = await endpoint('/failing-again');
    const [event] = await h.db.transaction().execute((trx) => recordEvents(trx, [{ userId: h.api.userId, type: 'post.published', data: { id: 'p' }, request: null }]));
    const asks = [];
    for (let i = 0; i < 3; i += 1) asks.push(await h.api.request('POST', `/api/v1/webhooks/${id}/redeliver`, { body: { event_id: event.id } }));

    const tests = [];
    for (let i = 0; i < 3; i += 1) tests.push(await h.api.request('POST', `/api/v1/webhooks/${id}/test`));

    // Each first attempt fails at once (500); the retry waits 5 s. Real time well under that: one POST each.
    const sentTo = () => received.filter((r) => r.path === '/failing-again');
    for (let i = 0; i < 100 && sentTo().length < 2; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.deepEqual(sentTo().map((r) => r.id).sort(), [event.id, tests[0].body.data.id].sort());
    assert.deepEqual(asks.map((res) => [res.status, res.body.data.id, res.body.meta.already_in_flight]), [[202, event.id, false], [202, event.id, true], [202, event.id, true]]);
    assert.deepEqual(tests.map((res) => [res.status, res.body.data.id, res.body.meta.already_in_flight]), [[202, tests[0].body.data.id, false], [202, tests[0].body.data.id, true], [202, tests[0].body.data.id, true]]);
    const testEvents = await h.db.selectFrom('events').select('id').where('type', '=', 'webhook.test').where(sql<boolean>`data->>'endpoint_id' = ${id}`).execute();
    assert.equal(testEvents.length, 1, 'one webhook.test written');
    // Asks joined in a loop reach the waiting workflow at most once every 5 s (each is an event of its history).
    for (const workflowId of [`${webhookWorkflowId(event.id, id)}-again`, webhookWorkflowId(tests[0].body.data.id, id)]) {
      const history = await h.env.client.workflow.getHandle(workflowId).fetchHistory();
      assert.equal((history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes).length, 1, workflowId);
    }

    assert.equal((await h.api.request('DELETE', `/api/v1/webhooks/${id}`)).status, 200);
    for (const workflowId of [`${webhookWorkflowId(event.id, id)}-again`, webhookWorkflowId(tests[0].body.data.id, id)]) {
      await h.env.client.workflow.getHandle(workflowId).terminate('test over');
    }
  });

  it('/redeliver and /test asked again while their delivery waits for its retry send at once (decisions.md: "sends an event again now"), not hours later', async () => {
    const id = await endpoint('/recovering');
    const [event] = await h.db.transaction().execute((trx) => recordEvents(trx, [{ userId: h.api.userId, type: 'post.published', data: { id: 'p' }, request: null }]));
    const redeliver = () => h.api.request('POST', `/api/v1/webhooks/${id}/redeliver`, { body: { event_id: event.id } });
    const test = () => h.api.request('POST', `/api/v1/webhooks/${id}/test`);
    const first = [await redeliver(), await test()];
    assert.deepEqual(first.map((res) => [res.status, res.body.meta.already_in_flight]), [[202, false], [202, false]]);
    const sentTo = () => received.filter((r) => r.path === '/recovering');
    const until = async (n: number, ms: number) => {
      for (let waited = 0; waited < ms && sentTo().length < n; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      return sentTo().length;
    };
    // Each failed at once and again after its 5 s retry: both now wait 5 minutes for their third attempt.
    assert.equal(await until(4, 15_000), 4);

    recoveringFails = false;
    const again = [await redeliver(), await test()];
    assert.deepEqual(again.map((res) => [res.status, res.body.data.id, res.body.meta.already_in_flight]), [[202, event.id, true], [202, first[1].body.data.id, true]]);
    // At once, though not sooner than 5 s after the last attempt: well inside 15 s, where the schedule says 5 minutes.
    assert.equal(await until(6, 15_000), 6, 'each joined delivery attempted again now');
    // The attempts are recorded once their answers came back.
    const deliveredRows = () => h.db.selectFrom('webhook_deliveries').select('event_id').where('endpoint_id', '=', id).where('delivered', '=', true).execute();
    let delivered = await deliveredRows();
    for (let i = 0; i < 100 && delivered.length < 2; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      delivered = await deliveredRows();
    }
    assert.deepEqual(delivered.map((r) => r.event_id).sort(), [event.id, first[1].body.data.id].sort());
    const dispatch = await h.db.selectFrom('webhook_dispatches').select(['attempts', 'settled_at']).where('endpoint_id', '=', id).executeTakeFirstOrThrow();
    assert.notEqual(dispatch.settled_at, null, "the test's dispatch is settled");
    assert.equal((await h.api.request('DELETE', `/api/v1/webhooks/${id}`)).status, 200);
  });

  it('/deliveries pages through every attempt kept with after (the last id of a page) and has_more, and filters by event_id', async () => {
    const id = await endpoint('/paged');
    const events = await h.db.transaction().execute((trx) =>
      recordEvents(trx, [0, 1].map(() => ({ userId: h.api.userId, type: 'post.published' as const, data: { id: 'p' }, request: null }))),
    );
    const start = Date.now() - 3600_000;
    // 130 attempts, every other pair at the same instant, so ties are ordered by id.
    const rows = Array.from({ length: 130 }, (_, i) => ({
      endpoint_id: id,
      event_id: events[i % 2].id,
      attempted_at: new Date(start + Math.floor(i / 2) * 1000),
      status_code: 500,
      error: null,
      duration_ms: 5,
      delivered: false,
    }));
    await h.db.insertInto('webhook_deliveries').values(rows).execute();
    const expected = await h.db.selectFrom('webhook_deliveries').select(['id', 'event_id']).where('endpoint_id', '=', id).orderBy('attempted_at', 'desc').orderBy('id', 'desc').execute();

    const pages: Array<{ ids: string[]; hasMore: boolean }> = [];
    let after: string | undefined;
    do {
      const res = await h.api.request('GET', `/api/v1/webhooks/${id}/deliveries?limit=50${after ? `&after=${after}` : ''}`);
      assert.equal(res.status, 200, res.text);
      pages.push({ ids: res.body.data.map((d: { id: string }) => d.id), hasMore: res.body.meta.has_more });
      after = res.body.data.at(-1)?.id;
    } while (pages.at(-1)!.hasMore);
    assert.deepEqual(pages.map((p) => [p.ids.length, p.hasMore]), [[50, true], [50, true], [30, false]]);
    assert.deepEqual(pages.flatMap((p) => p.ids), expected.map((r) => r.id));

    const one = await h.api.request('GET', `/api/v1/webhooks/${id}/deliveries?limit=100&event_id=${events[1].id}`);
    assert.deepEqual([one.body.data.length, one.body.meta.has_more], [65, false]);
    assert.deepEqual(one.body.data.map((d: { id: string }) => d.id), expected.filter((r) => r.event_id === events[1].id).map((r) => r.id));
    assert.equal((await h.api.request('GET', `/api/v1/webhooks/${id}/deliveries?after=not-an-id`)).status, 400);
  });
});
