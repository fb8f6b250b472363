import assert from 'node:assert/strict';
import { recordEvents } from '../../src/events/outbox';
import { startApi, type TestApi } from '../helpers/api';

describe('GET /api/v1/events and /api/v1/events/:id', function () {
  this.timeout(60_000);
  let api: TestApi;
  const written: string[] = [];

  before(async () => {
    api = await startApi();
    for (let i = 0; i < 5; i += 1) {
      const type = i % 2 === 0 ? ('post.published' as const) : ('post.failed' as const);
      const [row] = await api.deps.db.transaction().execute((trx) => recordEvents(trx, [{ userId: api.userId, type, data: { id: `post-${i}` }, request: null }]));
      written.push(row.id);
    }
  });
  after(async () => api?.close());

  it('lists newest first and pages with `after` and `has_more`', async () => {
    const first = await api.request('GET', '/api/v1/events?limit=2');
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.data.map((e: { id: string }) => e.id), [written[4], written[3]]);
    assert.equal(first.body.meta.has_more, true);
    assert.deepEqual(Object.keys(first.body.data[0]).sort(), ['created_at', 'data', 'id', 'request', 'type']);
    const second = await api.request('GET', `/api/v1/events?limit=2&after=${written[3]}`);
    assert.deepEqual(second.body.data.map((e: { id: string }) => e.id), [written[2], written[1]]);
    const last = await api.request('GET', `/api/v1/events?limit=2&after=${written[1]}`);
    assert.deepEqual([last.body.data.map((e: { id: string }) => e.id), last.body.meta.has_more], [[written[0]], false]);
  });

  it('filters by type', async () => {
    const res = await api.request('GET', '/api/v1/events?type=post.failed');
    assert.deepEqual(res.body.data.map((e: { id: string; type: string }) => [e.id, e.type]), [[written[3], 'post.failed'], [written[1], 'post.failed']]);
  });

  it('refuses a limit over 100, an unknown type and a malformed cursor with 400 bad_request', async () => {
    for (const query of ['limit=101', 'limit=0', 'type=post.exploded', 'after=nope']) {
      const res = await api.request('GET', `/api/v1/events?${query}`);
      assert.equal(res.status, 400, `${query}: ${res.text}`);
      assert.equal(res.body.error.code, 'bad_request');
    }
  });

  it('shows one event by id; another user sees 404, as for an unknown or malformed id', async () => {
    const own = await api.request('GET', `/api/v1/events/${written[2]}`);
    assert.equal(own.status, 200, own.text);
    assert.deepEqual([own.body.data.id, own.body.data.type, own.body.data.data, own.body.data.request], [written[2], 'post.published', { id: 'post-2' }, null]);
    const other = await api.newUser();
    for (const path of [`/api/v1/events/${written[2]}`, '/api/v1/events/evt_00000000000000000000000000', '/api/v1/events/whatever']) {
      const res = await api.request('GET', path, { key: other.apiKey });
      assert.equal(res.status, 404, `${path}: ${res.text}`);
      assert.equal(res.body.error.code, 'not_found');
    }
    const theirs = await api.request('GET', '/api/v1/events', { key: other.apiKey });
    assert.deepEqual(theirs.body.data, []);
  });

  it('needs webhooks:read; a full-access key (scopes predating webhooks) keeps access', async () => {
    const postsOnly = await api.newUser('free', ['posts:read', 'posts:write']);
    for (const path of ['/api/v1/events', `/api/v1/events/${written[0]}`]) {
      const res = await api.request('GET', path, { key: postsOnly.apiKey });
      assert.equal(res.status, 403, res.text);
      assert.equal(res.body.error.code, 'insufficient_scope');
    }
    const reader = await api.newUser('free', ['webhooks:read']);
    assert.equal((await api.request('GET', '/api/v1/events', { key: reader.apiKey })).status, 200);
    const fullAccess = await api.newUser('free', null);
    assert.equal((await api.request('GET', '/api/v1/events', { key: fullAccess.apiKey })).status, 200);
  });
});
