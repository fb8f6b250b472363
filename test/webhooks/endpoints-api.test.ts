import assert from 'node:assert/strict';
import { createSealedBox } from '../../src/crypto/sealed-box';
import { openWebhookSecret } from '../../src/webhooks/secrets';
import { privatelyResolvedHostname } from '../helpers/private-hostname';
import { startApi, testConfig, testEncryptionKey, type TestApi } from '../helpers/api';

const secretPattern = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe('Webhook endpoints API', function () {
  this.timeout(60_000);
  let api: TestApi;
  const box = createSealedBox(Buffer.from(testEncryptionKey, 'hex'));

  before(async () => {
    // As in production: https on public addresses only.
    api = await startApi({ deps: { config: testConfig({ HERALD_ALLOW_INSECURE_URLS: 'false' }) } });
  });
  after(async () => api?.close());

  const create = (body: unknown, key?: string) => api.request('POST', '/api/v1/webhooks', { body, key });
  const sealedRow = (id: string) => api.deps.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('creates an endpoint: 201 with a whsec_ secret shown once and stored sealed', async () => {
    const res = await create({ url: 'https://hooks.example.com/herald', events: ['post.published', 'post.failed', 'post.published'], description: 'prod' });
    assert.equal(res.status, 201, res.text);
    const { secret, ...view } = res.body.data;
    assert.match(secret, secretPattern);
    assert.equal(Buffer.from(secret.slice('whsec_'.length), 'base64').length, 32);
    assert.deepEqual(
      { ...view, id: undefined, created_at: undefined, updated_at: undefined },
      { id: undefined, url: 'https://hooks.example.com/herald', events: ['post.published', 'post.failed'], description: 'prod', enabled: true, disabled_reason: null, previous_secret_expires_at: null, created_at: undefined, updated_at: undefined },
    );
    const row = await sealedRow(view.id);
    assert.ok(!row.secret_sealed.includes(secret.slice(6, 20)), 'not stored in the clear');
    assert.equal(openWebhookSecret(box, view.id, row.secret_sealed), secret);

    const shown = await api.request('GET', `/api/v1/webhooks/${view.id}`);
    assert.equal(shown.status, 200);
    assert.equal(shown.body.data.secret, undefined);
    const listed = await api.request('GET', '/api/v1/webhooks');
    assert.ok(listed.body.data.some((e: { id: string; secret?: string }) => e.id === view.id && e.secret === undefined));
    const everything = await create({ url: 'https://hooks.example.com/all' });
    assert.equal(everything.body.data.events, null, 'events omitted = every type');
  });

  it('refuses a URL that is not https on a public address, and an unknown event type, with 400 bad_request', async () => {
    for (const url of ['http://hooks.example.com/x', 'https://127.0.0.1/x', 'https://10.0.0.8/x', 'https://169.254.169.254/latest', 'https://localhost/x', 'https://[::1]/x', 'ftp://example.com/x', 'not a url']) {
      const res = await create({ url });
      assert.equal(res.status, 400, `${url}: ${res.text}`);
      assert.equal(res.body.error.code, 'bad_request');
      assert.match(res.body.error.message, /^url: /);
    }
    const unknown = await create({ url: 'https://hooks.example.com/x', events: ['post.exploded'] });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.code, 'bad_request');
    const count = await api.deps.db.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', api.userId).executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 2, 'nothing was written for a refused request');
  });

  it('refuses, at create and PATCH, a host that resolves to an address that is not public, and localhost. with its trailing dot; a name with no answer passes', async () => {
    const { hostname, address } = await privatelyResolvedHostname();
    const { body } = await create({ url: 'https://hooks.example.com/resolved' });
    for (const url of [`https://${hostname}/h`, 'https://localhost./h', 'https://api.localhost./h']) {
      for (const res of [await create({ url }), await api.request('PATCH', `/api/v1/webhooks/${body.data.id}`, { body: { url } })]) {
        assert.equal(res.status, 400, `${url}: ${res.text}`);
        assert.equal(res.body.error.code, 'bad_request');
        assert.match(res.body.error.message, /^url: .* (resolves to an address that|is) not (public|a public address)/);
        assert.ok(!res.text.includes(address), 'the private address is not named');
      }
    }
    assert.equal((await sealedRow(body.data.id)).url, 'https://hooks.example.com/resolved');
    const unresolved = await create({ url: 'https://no-such-host.invalid/h' });
    assert.equal(unresolved.status, 201, unresolved.text);
  });

  it('allows at most 10 endpoints a user', async () => {
    const user = await api.newUser();
    for (let i = 0; i < 10; i += 1) assert.equal((await create({ url: `https://hooks.example.com/${i}` }, user.apiKey)).status, 201);
    const eleventh = await create({ url: 'https://hooks.example.com/11' }, user.apiKey);
    assert.equal(eleventh.status, 400, eleventh.text);
    assert.match(eleventh.body.error.message, /At most 10 webhook endpoints/);
  });

  it('PATCH changes url, events, description and enabled; events: null is every type again', async () => {
    const { body } = await create({ url: 'https://hooks.example.com/patch', events: ['post.failed'] });
    const id = body.data.id;
    const res = await api.request('PATCH', `/api/v1/webhooks/${id}`, { body: { url: 'https://hooks2.example.com/p', events: null, description: 'moved', enabled: false } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual([res.body.data.url, res.body.data.events, res.body.data.description, res.body.data.enabled], ['https://hooks2.example.com/p', null, 'moved', false]);
    await api.deps.db.updateTable('webhook_endpoints').set({ disabled_reason: 'the endpoint answered 410 Gone' }).where('id', '=', id).execute();
    const on = await api.request('PATCH', `/api/v1/webhooks/${id}`, { body: { enabled: true } });
    assert.deepEqual([on.body.data.enabled, on.body.data.disabled_reason], [true, null]);
    const failingSince = new Date('2026-01-01T00:00:00Z');
    await api.deps.db.updateTable('webhook_endpoints').set({ failing_since: failingSince }).where('id', '=', id).execute();
    assert.equal((await api.request('PATCH', `/api/v1/webhooks/${id}`, { body: { enabled: true } })).status, 200);
    assert.deepEqual((await sealedRow(id)).failing_since, failingSince, 'enabled: true to an endpoint that is on leaves its failing run alone');
    for (const body of [{}, { url: 'https://127.0.0.1/' }, { events: [] }, { secret: 'mine' }]) {
      const refused = await api.request('PATCH', `/api/v1/webhooks/${id}`, { body });
      assert.equal(refused.status, 400, JSON.stringify(body));
    }
  });

  it('rotate-secret: a new secret shown once; the old one stays sealed beside it for 24 hours', async () => {
    const { body } = await create({ url: 'https://hooks.example.com/rotate' });
    const before = body.data.secret;
    const res = await api.request('POST', `/api/v1/webhooks/${body.data.id}/rotate-secret`);
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.data.secret, secretPattern);
    assert.notEqual(res.body.data.secret, before);
    const until = new Date(res.body.data.previous_secret_expires_at).getTime();
    assert.ok(Math.abs(until - Date.now() - 24 * 3600_000) < 60_000, res.body.data.previous_secret_expires_at);
    const row = await sealedRow(body.data.id);
    assert.equal(openWebhookSecret(box, row.id, row.secret_sealed), res.body.data.secret);
    assert.equal(openWebhookSecret(box, row.id, row.retired_secrets[0].sealed), before);
  });

  it('rotate-secret keeps every secret rotated out in the last 24 hours, newest first, three at most', async () => {
    const { body } = await create({ url: 'https://hooks.example.com/rotate-often' });
    const secrets = [body.data.secret as string];
    for (let i = 0; i < 4; i += 1) secrets.push((await api.request('POST', `/api/v1/webhooks/${body.data.id}/rotate-secret`)).body.data.secret);
    const row = await sealedRow(body.data.id);
    assert.deepEqual(row.retired_secrets.map((retired) => openWebhookSecret(box, row.id, retired.sealed)), [secrets[3], secrets[2], secrets[1]], 'the fourth rotation stopped the first secret');
  });

  it('DELETE removes it; another user gets 404 on every route and changes nothing', async () => {
    const { body } = await create({ url: 'https://hooks.example.com/mine' });
    const id = body.data.id;
    const other = await api.newUser();
    for (const [method, path, reqBody] of [
      ['GET', `/api/v1/webhooks/${id}`, undefined],
      ['PATCH', `/api/v1/webhooks/${id}`, { enabled: false }],
      // A URL it would refuse on one's own endpoint changes nothing: the endpoint is not theirs (it answered 400).
      ['PATCH', `/api/v1/webhooks/${id}`, { url: 'http://hooks.example.com/theirs' }],
      ['PATCH', `/api/v1/webhooks/${id}`, { url: 'https://127.0.0.1/theirs', enabled: false }],
      ['DELETE', `/api/v1/webhooks/${id}`, undefined],
      ['POST', `/api/v1/webhooks/${id}/rotate-secret`, undefined],
      ['GET', '/api/v1/webhooks/not-a-uuid', undefined],
    ] as const) {
      const res = await api.request(method, path, { key: other.apiKey, body: reqBody });
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.error.code, 'not_found');
    }
    assert.equal((await sealedRow(id)).enabled, true);
    assert.equal((await sealedRow(id)).url, 'https://hooks.example.com/mine');
    const deleted = await api.request('DELETE', `/api/v1/webhooks/${id}`);
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal((await api.request('GET', `/api/v1/webhooks/${id}`)).status, 404);
  });

  it('scopes: webhooks:read lists, webhooks:write changes; full-access keys do both', async () => {
    const reader = await api.newUser('free', ['webhooks:read']);
    assert.equal((await api.request('GET', '/api/v1/webhooks', { key: reader.apiKey })).status, 200);
    const refused = await create({ url: 'https://hooks.example.com/r' }, reader.apiKey);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'insufficient_scope');
    const writer = await api.newUser('free', ['webhooks:write']);
    assert.equal((await create({ url: 'https://hooks.example.com/w' }, writer.apiKey)).status, 201);
    assert.equal((await api.request('GET', '/api/v1/webhooks', { key: writer.apiKey })).status, 403);
    const postsOnly = await api.newUser('free', ['posts:read', 'posts:write']);
    assert.equal((await api.request('GET', '/api/v1/webhooks', { key: postsOnly.apiKey })).status, 403);
  });

  it('is in the OpenAPI document', async () => {
    const doc = await api.request('GET', '/api/v1/openapi.json');
    for (const path of ['/api/v1/webhooks', '/api/v1/webhooks/{id}', '/api/v1/webhooks/{id}/rotate-secret', '/api/v1/events', '/api/v1/events/{id}']) {
      assert.ok(doc.body.paths[path], path);
    }
  });
});
