import assert from 'node:assert/strict';
import { recordEvents } from '../../src/events/outbox';
import { removeExpiredEvents } from '../../src/events/retention';
import { startApi, type TestApi } from '../helpers/api';

describe('Event retention', function () {
  this.timeout(60_000);
  let api: TestApi;
  before(async () => {
    api = await startApi();
  });
  after(async () => api?.close());

  it('removes events and delivery attempts older than 30 days, and keeps the rest', async () => {
    const db = api.deps.db;
    const [old, recent] = await db.transaction().execute((trx) =>
      recordEvents(trx, [
        { userId: api.userId, type: 'post.published', data: { id: 'old' }, request: null },
        { userId: api.userId, type: 'post.published', data: { id: 'recent' }, request: null },
      ]),
    );
    const day = 24 * 3600_000;
    // created_at is never written by the application; a test moves it back by hand.
    await api.deps.pool.query(`update events set created_at = now() - interval '30 days 1 minute' where id = $1`, [old.id]);
    await api.deps.pool.query(`update events set created_at = now() - interval '29 days 23 hours' where id = $1`, [recent.id]);
    const created = await api.request('POST', '/api/v1/webhooks', { body: { url: 'https://hooks.example.com/r' } });
    const endpointId = created.body.data.id;
    await db
      .insertInto('webhook_deliveries')
      .values([
        { endpoint_id: endpointId, event_id: recent.id, attempted_at: new Date(Date.now() - 31 * day), status_code: 500, error: null, duration_ms: 3, delivered: false },
        { endpoint_id: endpointId, event_id: recent.id, attempted_at: new Date(Date.now() - day), status_code: 200, error: null, duration_ms: 3, delivered: true },
        { endpoint_id: endpointId, event_id: old.id, attempted_at: new Date(Date.now() - day), status_code: 200, error: null, duration_ms: 3, delivered: true },
      ])
      .execute();

    assert.ok((await removeExpiredEvents(db)) >= 1);
    const left = await db.selectFrom('events').select('id').where('id', 'in', [old.id, recent.id]).execute();
    assert.deepEqual(left.map((r) => r.id), [recent.id]);
    const attempts = await db.selectFrom('webhook_deliveries').select(['event_id', 'delivered']).where('endpoint_id', '=', endpointId).execute();
    assert.deepEqual(attempts, [{ event_id: recent.id, delivered: true }]);
    assert.equal((await api.request('GET', `/api/v1/events/${old.id}`)).status, 404);
  });

  it('an expired event is neither listed nor shown before the cleanup removes it', async () => {
    const user = await api.newUser();
    const [expired, kept] = await api.deps.db.transaction().execute((trx) =>
      recordEvents(trx, [
        { userId: user.userId, type: 'post.published', data: { id: 'expired' }, request: null },
        { userId: user.userId, type: 'post.published', data: { id: 'kept' }, request: null },
      ]),
    );
    await api.deps.pool.query(`update events set created_at = now() - interval '30 days 1 minute' where id = $1`, [expired.id]);
    await api.deps.pool.query(`update events set created_at = now() - interval '29 days 23 hours' where id = $1`, [kept.id]);
    const listed = await api.request('GET', '/api/v1/events', { key: user.apiKey });
    assert.deepEqual(listed.body.data.map((e: { id: string }) => e.id), [kept.id]);
    const shown = await api.request('GET', `/api/v1/events/${expired.id}`, { key: user.apiKey });
    assert.deepEqual([shown.status, shown.body.error?.code], [404, 'not_found']);
    assert.equal((await api.request('GET', `/api/v1/events/${kept.id}`, { key: user.apiKey })).status, 200);
  });
});
