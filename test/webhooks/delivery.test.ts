import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { createWebhookActivities } from '../../activities/webhooks';
import { recordEvents } from '../../src/events/outbox';
import { createLogger } from '../../src/logger';
import { createHttpClient } from '../../src/net/http';
import { webhookRetrySchedule } from '../../workflows/deliver-webhook';
import { privatelyResolvedHostname } from '../helpers/private-hostname';
import { testSealedBox } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

const scheduleMs = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000, 14 * 3600_000, 20 * 3600_000, 24 * 3600_000];

describe('Webhook delivery workflow (time skipping)', function () {
  this.timeout(180_000);
  let h: PostsHarness;
  let receiver: Server;
  let url: string;
  let answers: number[] = [];
  let answerBody = '{}';
  let received: Received[] = [];

  before(async () => {
    h = await startPostsHarness();
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        const status = answers.shift() ?? 500;
        if (status === 0) return; // never answers
        res.statusCode = status;
        if (status === 302) res.setHeader('location', `${url}-elsewhere`);
        res.end(answerBody);
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    receiver?.closeAllConnections();
    receiver?.close();
    await h?.stop();
  });
  beforeEach(() => {
    answers = [];
    answerBody = '{}';
    received = [];
  });

  const newEndpoint = async () => {
    // A user has at most 10 endpoints, and each test needs only its own.
    await h.db.deleteFrom('webhook_endpoints').where('user_id', '=', h.api.userId).execute();
    const res = await h.api.request('POST', '/api/v1/webhooks', { body: { url } });
    assert.equal(res.status, 201, res.text);
    return res.body.data as { id: string; secret: string };
  };
  const newEvent = async () =>
    (await h.db.transaction().execute((trx) => recordEvents(trx, [{ userId: h.api.userId, type: 'post.published', data: { id: 'p' }, request: null }])))[0];
  const deliver = (eventId: string, endpointId: string) =>
    h.env.client.workflow.execute('deliverWebhook', { taskQueue: h.taskQueue, workflowId: `webhook-${eventId}-${endpointId}`, args: [{ eventId, endpointId }] });
  const attempts = (endpointId: string) =>
    h.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).orderBy('attempted_at').execute();
  const expireRetiredSecrets = (id: string) =>
    sql`update webhook_endpoints set retired_secrets = (select jsonb_agg(jsonb_set(s, '{expires_at}', to_jsonb(now() - interval '1 ms'))) from jsonb_array_elements(retired_secrets) s)
      where id = ${id}`.execute(h.db);
  const endpointRow = (id: string) => h.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('the schedule is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h', () => {
    assert.deepEqual(webhookRetrySchedule, scheduleMs);
  });

  it('retries a failing endpoint on the whole schedule as durable timers, then gives up; same webhook-id, each attempt signed', async () => {
    const endpoint = await newEndpoint();
    const event = await newEvent();
    assert.equal(await deliver(event.id, endpoint.id), 'given_up');
    const rows = await attempts(endpoint.id);
    assert.equal(rows.length, 10);
    // The waits are the workflow's durable timers, exactly the schedule; an attempt's own run (real time, longer on a
    // loaded machine) comes on top, so the gaps between attempts are only bounded below.
    const history = await h.env.client.workflow.getHandle(`webhook-${event.id}-${endpoint.id}`).fetchHistory();
    const timers = (history.events ?? []).flatMap((e) => (e.timerStartedEventAttributes ? [e.timerStartedEventAttributes.startToFireTimeout] : []));
    assert.deepEqual(timers.map((t) => Number(t?.seconds ?? 0) * 1000 + Math.round((t?.nanos ?? 0) / 1e6)), scheduleMs);
    const gaps = rows.slice(1).map((row, i) => row.attempted_at.getTime() - rows[i].attempted_at.getTime());
    gaps.forEach((gap, i) => assert.ok(gap >= scheduleMs[i], `gap ${i}: ${gap} ms, expected at least ${scheduleMs[i]}`));
    assert.deepEqual(rows.map((r) => [r.status_code, r.delivered]), rows.map(() => [500, false]));
    assert.equal(received.length, 10);
    for (const delivery of received) {
      assert.equal(delivery.headers['webhook-id'], event.id);
      const verified = new Webhook(endpoint.secret).verify(delivery.body, delivery.headers as Record<string, string>) as { id: string; type: string };
      assert.deepEqual([verified.id, verified.type], [event.id, 'post.published']);
    }
    const row = await endpointRow(endpoint.id);
    assert.equal(row.enabled, true, 'three days of retries alone do not disable it');
    assert.ok(row.failing_since);
  });

  it('a success after failures ends the delivery and the failing run', async () => {
    const endpoint = await newEndpoint();
    answers = [503, 500, 204];
    assert.equal(await deliver((await newEvent()).id, endpoint.id), 'delivered');
    assert.deepEqual((await attempts(endpoint.id)).map((r) => r.delivered), [false, false, true]);
    assert.equal((await endpointRow(endpoint.id)).failing_since, null);
  });

  it('an attempt gets 15 s; a redirect is not followed and counts as a failure', async () => {
    const endpoint = await newEndpoint();
    answers = [0, 302, 200];
    assert.equal(await deliver((await newEvent()).id, endpoint.id), 'delivered');
    const rows = await attempts(endpoint.id);
    assert.deepEqual(rows.map((r) => [r.status_code, r.delivered]), [[null, false], [302, false], [200, true]]);
    assert.ok(rows[0].error && rows[0].duration_ms >= 15_000 && rows[0].duration_ms < 20_000, `${rows[0].error} after ${rows[0].duration_ms} ms`);
    assert.equal(received.length, 3, 'nothing was sent to the redirect target');
  });

  it('a 2xx is delivered whatever the size of its body', async () => {
    const endpoint = await newEndpoint();
    answers = [200];
    answerBody = JSON.stringify({ padding: 'x'.repeat(100 * 1024) });
    assert.equal(await deliver((await newEvent()).id, endpoint.id), 'delivered');
    assert.deepEqual((await attempts(endpoint.id)).map((r) => [r.status_code, r.error, r.delivered]), [[200, null, true]]);
  });

  it('a 410 disables the endpoint at once, saying why', async () => {
    const endpoint = await newEndpoint();
    answers = [410];
    assert.equal(await deliver((await newEvent()).id, endpoint.id), 'disabled');
    const row = await endpointRow(endpoint.id);
    assert.deepEqual([row.enabled, row.disabled_reason], [false, 'The endpoint answered 410 Gone']);
    assert.equal((await attempts(endpoint.id)).length, 1);
    assert.equal(await deliver((await newEvent()).id, endpoint.id), 'gone', 'nothing more is sent to a disabled endpoint');
    assert.equal(received.length, 1);
  });

  it('an endpoint that has failed every delivery for five days is disabled', async () => {
    const endpoint = await newEndpoint();
    const now = await h.env.currentTimeMs();
    await h.db.updateTable('webhook_endpoints').set({ failing_since: new Date(now - 5 * 24 * 3600_000 + 60_000) }).where('id', '=', endpoint.id).execute();
    assert.equal(await deliver((await newEvent()).id, endpoint.id), 'disabled');
    const row = await endpointRow(endpoint.id);
    assert.deepEqual([row.enabled, row.disabled_reason], [false, 'Every delivery failed for 5 days']);
    assert.equal((await attempts(endpoint.id)).length, 3, 'the failures at 5 days - 60 s and - 55 s left it on; the one 5 min later crossed five days');
  });

  it('switched back on after five days of failures, its failing run starts afresh: the next failure does not disable it', async () => {
    const endpoint = await newEndpoint();
    const now = await h.env.currentTimeMs();
    await h.db.updateTable('webhook_endpoints').set({ failing_since: new Date(now - 5 * 24 * 3600_000) }).where('id', '=', endpoint.id).execute();
    answers = [500];
    assert.equal(await deliver((await newEvent()).id, endpoint.id), 'disabled');
    const patched = await h.api.request('PATCH', `/api/v1/webhooks/${endpoint.id}`, { body: { enabled: true } });
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await endpointRow(endpoint.id)).failing_since, null);

    answers = [500, 200];
    assert.equal(await deliver((await newEvent()).id, endpoint.id), 'delivered');
    assert.deepEqual((await attempts(endpoint.id)).map((r) => r.delivered), [false, false, true]);
    assert.equal((await endpointRow(endpoint.id)).enabled, true);
  });

  it('an endpoint whose host resolves to a private address records a blocked attempt that does not name the address', async () => {
    const { hostname, address } = await privatelyResolvedHostname();
    const endpoint = await newEndpoint();
    await h.db.updateTable('webhook_endpoints').set({ url: `https://${hostname}/hook` }).where('id', '=', endpoint.id).execute();
    // The harness's worker may fetch private addresses (its receivers are on 127.0.0.1); production's client may not.
    const http = createHttpClient({ allowInsecure: false });
    try {
      const activities = createWebhookActivities({ db: h.db, logger: createLogger('silent'), sealedBox: testSealedBox, http });
      assert.equal(await activities.attemptWebhookDelivery({ eventId: (await newEvent()).id, endpointId: endpoint.id, at: Date.now() }), 'failed');
    } finally {
      await http.close();
    }
    const listed = await h.api.request('GET', `/api/v1/webhooks/${endpoint.id}/deliveries`);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(listed.body.data.map((d: { error: string | null }) => d.error), [`${hostname} resolves to an address that is not public`]);
    assert.ok(!listed.text.includes(address));
  });

  it('during a rotation both secrets sign; after 24 hours only the new one', async () => {
    const endpoint = await newEndpoint();
    const rotated = await h.api.request('POST', `/api/v1/webhooks/${endpoint.id}/rotate-secret`);
    answers = [200];
    assert.equal(await deliver((await newEvent()).id, endpoint.id), 'delivered');
    const during = received[0];
    assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2);
    for (const secret of [endpoint.secret, rotated.body.data.secret]) new Webhook(secret).verify(during.body, during.headers as Record<string, string>);

    await expireRetiredSecrets(endpoint.id);
    answers = [200];
    assert.equal(await deliver((await newEvent()).id, endpoint.id), 'delivered');
    const after = received[1];
    assert.equal(String(after.headers['webhook-signature']).split(' ').length, 1);
    new Webhook(rotated.body.data.secret).verify(after.body, after.headers as Record<string, string>);
    assert.throws(() => new Webhook(endpoint.secret).verify(after.body, after.headers as Record<string, string>));
  });

  it('a second rotation within 24 hours leaves the first secret signing: every secret rotated out in the last day signs', async () => {
    const endpoint = await newEndpoint();
    const rotations = [];
    for (let i = 0; i < 2; i += 1) {
      const rotated = await h.api.request('POST', `/api/v1/webhooks/${endpoint.id}/rotate-secret`);
      assert.equal(rotated.status, 200, rotated.text);
      rotations.push(rotated.body.data.secret as string);
    }
    answers = [200];
    assert.equal(await deliver((await newEvent()).id, endpoint.id), 'delivered');
    const [delivery] = received;
    assert.equal(String(delivery.headers['webhook-signature']).split(' ').length, 3);
    for (const secret of [endpoint.secret, ...rotations]) new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
  });

  it('a 2xx whose body trickles and never ends is delivered once its status came in time: the body is cut short, never a timeout', async () => {
    const endpoint = await newEndpoint();
    const trickler = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"ok":');
        const drip = setInterval(() => res.write(' '), 500);
        res.on('close', () => clearInterval(drip));
      });
    });
    await new Promise<void>((resolve) => trickler.listen(0, '127.0.0.1', resolve));
    await h.db.updateTable('webhook_endpoints').set({ url: `http://127.0.0.1:${(trickler.address() as AddressInfo).port}/hook` }).where('id', '=', endpoint.id).execute();
    const http = createHttpClient({ allowInsecure: true });
    try {
      const activities = createWebhookActivities({ db: h.db, logger: createLogger('silent'), sealedBox: testSealedBox, http });
      assert.equal(await activities.attemptWebhookDelivery({ eventId: (await newEvent()).id, endpointId: endpoint.id, at: Date.now() }), 'delivered');
    } finally {
      await http.close();
      trickler.closeAllConnections();
      trickler.close();
    }
    const [attempt] = await attempts(endpoint.id);
    assert.deepEqual([attempt.status_code, attempt.error, attempt.delivered], [200, null, true]);
    assert.ok(attempt.duration_ms < 10_000, `${attempt.duration_ms} ms: the body had its own short bound`);
  });
});
