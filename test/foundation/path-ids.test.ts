import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { apiRoutes } from '../../api/routes';
import type { Client } from '@temporalio/client';
import { createHttpClient } from '../../src/net/http';
import { createPlatformAdapters } from '../../src/platforms/registry';
import { type TestApi, startApi, testConfig } from '../helpers/api';

/**
 * A malformed id in the path names no resource: 404 `not_found` on every route, like an absent id (publishing-api.md
 * "Resource absent or another user's"; src/db/uuid.ts). Accounts and keys answered 400 "id: must be a UUID". Walks
 * every declared route with path parameters and no body (a body is validated before the id is looked up; PATCH
 * /accounts/:id is in test/accounts/manage.test.ts). Media keeps its own 404 code, `media_not_found`.
 */
describe('malformed path ids', function () {
  this.timeout(120_000);
  let api: TestApi;
  before(async () => {
    // The accounts and webhook routes need adapters and a Temporal client, but reach neither: each id is found absent
    // before anything is sent to a platform or started.
    const { platformUrls } = testConfig();
    const adapters = createPlatformAdapters({ http: createHttpClient({ allowInsecure: true }), platformUrls, allowInsecureUrls: true });
    api = await startApi({ plan: 'enterprise', deps: { adapters, temporal: {} as Client } });
  });
  after(() => api.close());

  const routes = apiRoutes.filter((route) => route.path.includes(':') && !route.body);

  it('covers the routes of every resource', () => {
    const covered = new Set(routes.map((route) => `${route.method} ${route.path}`));
    for (const expected of ['get /accounts/:id', 'delete /accounts/:id', 'delete /keys/:id', 'get /posts/:id', 'get /webhooks/:id', 'get /media/:id']) {
      assert.ok(covered.has(expected), expected);
    }
  });

  it('answers 404 not_found for each path parameter that is not a UUID', async () => {
    const failures: string[] = [];
    for (const route of routes) {
      for (const [, malformed] of route.path.matchAll(/:([A-Za-z0-9_]+)/g)) {
        const path = `/api/v1${route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => (name === malformed ? 'not-a-uuid' : randomUUID()))}`;
        const method = route.method.toUpperCase();
        const res = await api.request(method, path, method === 'GET' ? {} : { body: {} });
        if (res.status !== 404 || !['not_found', 'media_not_found'].includes(res.body?.error?.code)) failures.push(`${method} ${path} → ${res.status} ${res.text.slice(0, 160)}`);
      }
    }
    assert.deepEqual(failures, []);
  });
});
