import assert from 'node:assert/strict';
import { scopes } from '../../src/auth/scopes';
import { type TestApi, startApi } from '../helpers/api';

const isoMs = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('keys API', () => {
  let api: TestApi;
  before(async () => {
    api = await startApi({ plan: 'free' });
  });
  after(() => api.close());

  it('creates a key that works, shows the secret once and stores only its hash', async () => {
    const created = await api.request('POST', '/api/v1/keys', { body: { name: 'ci', scopes: ['posts:read'] } });
    assert.equal(created.status, 201);
    const { id, api_key, created_at } = created.body.data;
    assert.match(api_key, /^hld_[0-9A-Za-z]{40}$/);
    assert.match(created_at, isoMs);
    assert.deepEqual(created.body, { data: { id, name: 'ci', api_key, scopes: ['posts:read'], expires_at: null, created_at } });

    const row = await api.deps.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.notEqual(row.key_hash, api_key);
    assert.ok(!JSON.stringify(row).includes(api_key));

    const listed = await api.request('GET', '/api/v1/posts', { key: api_key });
    assert.equal(listed.status, 200);
    const listing = await api.request('GET', '/api/v1/keys');
    const entry = listing.body.data.find((key: { id: string }) => key.id === id);
    assert.deepEqual(entry, {
      id,
      name: 'ci',
      prefix: api_key.slice(0, 12),
      scopes: ['posts:read'],
      expires_at: null,
      created_at,
      last_used_at: entry.last_used_at,
      revoked_at: null,
    });
    assert.match(entry.last_used_at, isoMs);
    assert.ok(!listing.text.includes(api_key));
  });

  it('inherits the caller\'s scopes when scopes are omitted', async () => {
    const limited = await api.newUser('free', ['posts:read', 'keys:write']);
    const created = await api.request('POST', '/api/v1/keys', { key: limited.apiKey, body: { name: 'child' } });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body.data.scopes, ['posts:read', 'keys:write']);
  });

  it('gives a full-access key\'s child full access when scopes are omitted', async () => {
    const created = await api.request('POST', '/api/v1/keys', { body: { name: 'child' } });
    assert.equal(created.status, 201);
    assert.equal(created.body.data.scopes, null);
  });

  it('refuses to grant a scope the caller lacks, naming it', async () => {
    const limited = await api.newUser('free', ['posts:read', 'keys:write']);
    const res = await api.request('POST', '/api/v1/keys', { key: limited.apiKey, body: { name: 'x', scopes: ['posts:read', 'posts:write'] } });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, {
      error: { code: 'insufficient_scope', message: 'This API key cannot grant posts:write: it does not hold that scope' },
    });
  });

  it('refuses a full-access key (scopes: null) to a scoped caller', async () => {
    const limited = await api.newUser('free', ['posts:read', 'keys:write']);
    const res = await api.request('POST', '/api/v1/keys', { key: limited.apiKey, body: { name: 'x', scopes: null } });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, {
      error: {
        code: 'insufficient_scope',
        message: 'A full-access key can only be created by a full-access key; this key lacks posts:write, accounts:read, accounts:write, webhooks:read, webhooks:write',
      },
    });
  });

  it('refuses a full-access key to a caller that lists every scope: full access also holds scopes added later', async () => {
    const everyScope = await api.newUser('free', [...scopes]);
    const res = await api.request('POST', '/api/v1/keys', { key: everyScope.apiKey, body: { name: 'x', scopes: null } });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, {
      error: { code: 'insufficient_scope', message: 'A full-access key can only be created by a full-access key; this key holds only the scopes it lists' },
    });

    const inherited = await api.request('POST', '/api/v1/keys', { key: everyScope.apiKey, body: { name: 'child' } });
    assert.equal(inherited.status, 201);
    assert.deepEqual(inherited.body.data.scopes, [...scopes]);
    const subset = await api.request('POST', '/api/v1/keys', { key: everyScope.apiKey, body: { name: 'subset', scopes: ['webhooks:read', 'accounts:write'] } });
    assert.equal(subset.status, 201);
    assert.deepEqual(subset.body.data.scopes, ['webhooks:read', 'accounts:write']);
  });

  it('needs keys:write for every key route', async () => {
    const reader = await api.newUser('free', ['posts:read']);
    for (const [method, path, body] of [
      ['POST', '/api/v1/keys', { name: 'x' }],
      ['GET', '/api/v1/keys', undefined],
      ['DELETE', `/api/v1/keys/${reader.keyId}`, undefined],
    ] as const) {
      const res = await api.request(method, path, { key: reader.apiKey, body });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.deepEqual(res.body, {
        error: { code: 'insufficient_scope', message: 'This API key lacks the scope keys:write, which this request needs' },
      });
    }
  });

  it('validates the body, naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'name is required'],
      [{ name: '' }, 'name: must not be empty'],
      [{ name: 'x', scopes: ['posts:delete'] }, 'scopes[0]: Invalid option: expected one of "posts:read"|"posts:write"|"accounts:read"|"accounts:write"|"keys:write"|"webhooks:read"|"webhooks:write"'],
      [{ name: 'x', scopes: [] }, "scopes: must name at least one scope; omit the field to inherit this key's scopes"],
      [{ name: 'x', expires_at: 'tomorrow' }, 'expires_at: must be an ISO 8601 timestamp with a timezone, like 2030-01-01T00:00:00Z'],
      [{ name: 'x', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at: must be in the future'],
      [{ name: 'x', owner: 'me' }, 'Unknown field: owner'],
      [[1, 2], 'Request body: Invalid input: expected object, received array'],
    ];
    for (const [body, message] of cases) {
      const res = await api.request('POST', '/api/v1/keys', { body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(res.body, { error: { code: 'bad_request', message } });
    }
  });

  it('creates a key with an expiry that stops working after it', async () => {
    const expiresAt = new Date(Date.now() + 60_000).toISOString();
    const created = await api.request('POST', '/api/v1/keys', { body: { name: 'short', expires_at: expiresAt } });
    assert.equal(created.status, 201);
    assert.equal(created.body.data.expires_at, expiresAt);
  });

  it('a key that expires cannot create one that outlives it: later or no expires_at is 403, omitted inherits its expiry', async () => {
    // A leaked one-hour key with keys:write must not mint a key that never expires (a longer lifetime is a wider grant).
    const endsAt = new Date(Date.now() + 60 * 60_000);
    const end = endsAt.toISOString();
    const hourKey = await api.request('POST', '/api/v1/keys', { body: { name: 'one hour', expires_at: end } });
    assert.equal(hourKey.status, 201, hourKey.text);
    const key = hourKey.body.data.api_key;

    const inherited = await api.request('POST', '/api/v1/keys', { key, body: { name: 'child' } });
    assert.equal(inherited.status, 201, inherited.text);
    assert.equal(inherited.body.data.expires_at, end, 'omitted expires_at inherits the caller\'s');

    const later = await api.request('POST', '/api/v1/keys', { key, body: { name: 'longer', expires_at: new Date(endsAt.getTime() + 1000).toISOString() } });
    assert.equal(later.status, 403);
    assert.deepEqual(later.body, {
      error: {
        code: 'insufficient_scope',
        message: `This API key expires at ${end} and cannot create a key that lasts longer: send an expires_at no later than ${end}, or omit it to inherit this key's`,
      },
    });

    const same = await api.request('POST', '/api/v1/keys', { key, body: { name: 'same end', expires_at: end } });
    assert.equal(same.status, 201, same.text);
    const sooner = new Date(Date.now() + 60_000).toISOString();
    const shorter = await api.request('POST', '/api/v1/keys', { key, body: { name: 'shorter', expires_at: sooner } });
    assert.equal(shorter.status, 201, shorter.text);
    assert.equal(shorter.body.data.expires_at, sooner);

    const refused = await api.deps.db.selectFrom('api_keys').select('id').where('user_id', '=', api.userId).where('name', '=', 'longer').execute();
    assert.deepEqual(refused, [], 'nothing created for the refused request');
  });

  it('revokes a key: it stops working at once, revoking again answers the same', async () => {
    const created = await api.request('POST', '/api/v1/keys', { body: { name: 'doomed' } });
    const { id, api_key } = created.body.data;
    const revoked = await api.request('DELETE', `/api/v1/keys/${id}`);
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.data.id, id);
    assert.match(revoked.body.data.revoked_at, isoMs);
    const again = await api.request('DELETE', `/api/v1/keys/${id}`);
    assert.deepEqual(again.body, revoked.body);
    const refused = await api.request('GET', '/api/v1/posts', { key: api_key });
    assert.equal(refused.status, 401);
    assert.deepEqual(refused.body, {
      error: { code: 'unauthorized', message: `This API key was revoked on ${revoked.body.data.revoked_at}; use another key` },
    });
  });

  it('answers 404 for another user\'s key and leaves it working', async () => {
    const other = await api.newUser('free');
    const res = await api.request('DELETE', `/api/v1/keys/${other.keyId}`);
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: { code: 'not_found', message: `API key ${other.keyId} not found` } });
    assert.equal((await api.request('GET', '/api/v1/posts', { key: other.apiKey })).status, 200);
    const listing = await api.request('GET', '/api/v1/keys');
    assert.ok(!listing.body.data.some((key: { id: string }) => key.id === other.keyId));
  });

  it('answers 404 for a key id that is not a UUID, as every route does for a malformed id', async () => {
    const res = await api.request('DELETE', '/api/v1/keys/abc');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: { code: 'not_found', message: 'API key abc not found' } });
  });

  it('revokes a key named by its id in upper case', async () => {
    const other = await api.request('POST', '/api/v1/keys', { body: { name: 'upper' } });
    const res = await api.request('DELETE', `/api/v1/keys/${String(other.body.data.id).toUpperCase()}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.id, other.body.data.id);
  });
});
