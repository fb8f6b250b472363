import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { defineRoute } from '../../api/route';
import { apiRoutes } from '../../api/routes';
import { idParams } from '../../api/validation';
import { insertAccount } from '../posts/fixtures';
import { type TestApi, startApi } from '../helpers/api';

/**
 * The idempotency fingerprint takes the route and its parsed params, not the path as sent: every spelling Express
 * routes to the same endpoint and resource is the same request (publishing-api.md: 422 is for "a different method,
 * path or body"). It took `req.baseUrl + req.path`, so `/posts/` after `/posts`, or an upper-case id, was a 422.
 */
let executions = 0;
const testRoutes = [
  defineRoute({
    method: 'post',
    path: '/test/paths/:id/retry',
    summary: 'a bodiless retry on a resource',
    scope: 'posts:write',
    idempotent: true,
    params: idParams,
    responses: { 200: { description: 'retried' } },
    handler: async ({ params }) => ({ status: 200, body: { data: { id: params.id, serial: ++executions } } }),
  }),
];

describe('Idempotency-Key: the path is the route, not its spelling', () => {
  let api: TestApi;
  before(async () => {
    api = await startApi({ routes: [...apiRoutes, ...testRoutes] });
  });
  after(() => api.close());

  const keyed = (key: string) => ({ headers: { 'idempotency-key': key } });

  it('replays POST /api/v1/posts for the same key and body sent to /api/v1/posts/ or /API/V1/Posts', async () => {
    const account = await insertAccount(api.deps.db, api.userId, {
      platform: 'mastodon', platform_account_id: `m-${randomUUID()}`, username: 'paths',
      credentials: { access_token: 't' }, settings: { instance_url: 'https://mastodon.example' },
    });
    const body = { account_ids: [account.id], text: 'one draft', draft: true };
    const first = await api.request('POST', '/api/v1/posts', { ...keyed('k-slash'), body });
    assert.equal(first.status, 201, first.text);
    for (const path of ['/api/v1/posts/', '/API/V1/Posts']) {
      const again = await api.request('POST', path, { ...keyed('k-slash'), body });
      assert.deepEqual([again.status, again.headers.get('idempotent-replay'), again.body], [201, 'true', first.body], path);
    }
    const drafts = await api.deps.db.selectFrom('posts').select('id').where('account_id', '=', account.id).execute();
    assert.equal(drafts.length, 1);
  });

  it('replays a request on a resource named by its id in another letter case; another resource is 422', async () => {
    const id = randomUUID();
    const first = await api.request('POST', `/api/v1/test/paths/${id}/retry`, keyed('k-case'));
    assert.deepEqual(first.body, { data: { id, serial: executions } });
    const upper = await api.request('POST', `/api/v1/test/paths/${id.toUpperCase()}/retry/`, keyed('k-case'));
    assert.deepEqual([upper.status, upper.headers.get('idempotent-replay'), upper.body], [200, 'true', first.body]);

    const other = randomUUID();
    const elsewhere = await api.request('POST', `/api/v1/test/paths/${other}/retry`, keyed('k-case'));
    assert.equal(elsewhere.status, 422);
    assert.equal(
      elsewhere.body.error.message,
      `This Idempotency-Key was already used for a different request (POST /api/v1/test/paths/${id}/retry with another body); use a new key for a new request`,
    );
  });

  it('tells ids that are not UUIDs apart by their exact spelling', async () => {
    const first = await api.request('POST', '/api/v1/test/paths/Name/retry', keyed('k-name'));
    assert.equal(first.status, 200);
    const other = await api.request('POST', '/api/v1/test/paths/name/retry', keyed('k-name'));
    assert.equal(other.status, 422);
    assert.equal(other.body.error.code, 'idempotency_key_reused');
  });
});
