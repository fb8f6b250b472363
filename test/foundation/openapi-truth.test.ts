import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { replayedDespite5xx } from '../../api/idempotency';
import { documentedOperations, type DocumentedOperation } from '../../api/openapi';
import { errorStatus } from '../../src/errors';
import { apiRoutes } from '../../api/routes';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/* eslint-disable @typescript-eslint/no-explicit-any -- the served document is plain JSON */

/**
 * The served OpenAPI document against the route declarations (`api/route.ts`) and against what each route really
 * answers. Every operation is walked; none is named by hand, so a route added later is held to the same.
 */
describe('the OpenAPI document tells the truth about every route', function () {
  this.timeout(240_000);
  let h: PostsHarness;
  let doc: any;
  const declared = documentedOperations(apiRoutes);

  before(async () => {
    h = await startPostsHarness({ plan: 'pro' });
    doc = (await h.api.request('GET', '/api/v1/openapi.json')).body;
  });
  after(async () => h?.stop());

  const docPath = (op: DocumentedOperation) => `/api/v1${op.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
  const documented = (op: DocumentedOperation) => doc.paths[docPath(op)]?.[op.method];
  const resolve = (schema: any): any => (schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema);
  const errorCodes = (response: any): string[] => resolve(response.content['application/json'].schema).properties.error.properties.code.enum;
  const label = (op: DocumentedOperation) => `${op.method.toUpperCase()} ${op.path}`;

  it('documents every declared route, and nothing that is not one', () => {
    const inDocument = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods as object).map((method) => `${method} ${path}`));
    assert.deepEqual(inDocument.sort(), declared.map((op) => `${op.method} ${docPath(op)}`).sort());
  });

  it('declares on every response the headers the middleware sets: X-Request-Id; rate-limit headers past the key check; Retry-After on 429; Idempotent-Replay on what an idempotent route stores', () => {
    for (const op of declared) {
      for (const [status, response] of Object.entries<any>(documented(op).responses)) {
        const where = `${label(op)} ${status}`;
        const headers = response.headers ?? {};
        assert.equal(headers['X-Request-Id']?.required, true, where);
        for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
          if (status === '401') assert.equal(headers[name], undefined, `${where}: a 401 is answered before the limiter`);
          else assert.ok(headers[name], `${where} ${name}`);
        }
        if (status === '429') assert.ok(headers['Retry-After'], `${where} Retry-After`);
        // A 5xx only where one of its codes reports a change made (502 thread_rollback_incomplete): that one is stored.
        const stored = Number(status) < 500 || (op.errors ?? []).some((code) => errorStatus[code] === Number(status) && replayedDespite5xx(code));
        assert.equal(Boolean(headers['Idempotent-Replay']), op.idempotent === true && stored, `${where} Idempotent-Replay`);
      }
    }
  });

  it('documents each query parameter as the type its declaration parses it to (integer, boolean)', () => {
    let checked = 0;
    for (const op of declared.filter((o) => o.query)) {
      const parameters: any[] = documented(op).parameters.filter((p: any) => p.in === 'query');
      for (const [name, schema] of Object.entries((op.query as z.ZodObject).shape)) {
        const parsed = [(schema as z.ZodType).safeParse('1'), (schema as z.ZodType).safeParse('true')].find((r) => r.success && r.data !== undefined);
        const kind = typeof parsed?.data;
        const expected = kind === 'number' ? 'integer' : kind === 'boolean' ? 'boolean' : 'string';
        const parameter = parameters.find((p) => p.name === name);
        assert.equal(parameter?.schema.type, expected, `${label(op)} ?${name}`);
        checked += expected === 'string' ? 0 : 1;
      }
    }
    assert.ok(checked >= 10, 'limit, offset, include_hidden and the like were among them');
  });

  it('declares a request body required exactly when its documented schema refuses none (the reply: text required)', () => {
    for (const op of declared.filter((o) => o.bodies)) {
      const body = documented(op).requestBody;
      const refusesNone = Object.values(op.bodies!).every((schema) => !schema.safeParse(undefined).success);
      assert.equal(body.required, refusesNone, label(op));
    }
    const reply = doc.paths['/api/v1/posts/{id}/comments/{comment_id}/reply'].post.requestBody;
    assert.deepEqual([reply.required, resolve(reply.content['application/json'].schema).required], [true, ['text']]);
  });

  it('declares every success body as { data } with at most a meta beside it', () => {
    for (const op of declared) {
      for (const [status, response] of Object.entries<any>(documented(op).responses)) {
        if (Number(status) >= 300 || !response.content) continue;
        const schema = resolve(response.content['application/json'].schema);
        for (const variant of (schema.anyOf ?? schema.oneOf ?? [schema]).map(resolve)) {
          const members = Object.keys(variant.properties ?? {});
          assert.ok(members.includes('data') && members.every((m) => m === 'data' || m === 'meta'), `${label(op)} ${status}: ${members.join(', ')}`);
        }
      }
    }
  });

  it('every route answers a status and code it documents, with the headers it documents (an unknown id in every path parameter; no key)', async () => {
    for (const op of declared) {
      const path = op.path.replace(/:([A-Za-z0-9_]+)/g, () => randomUUID());
      const body = op.method === 'get' || op.method === 'delete' ? undefined : {};
      for (const key of [undefined, null]) {
        const res = await h.api.request(op.method.toUpperCase(), `/api/v1${path}`, { body, ...(key === null ? { key: null } : {}) });
        const where = `${label(op)}${key === null ? ' without a key' : ''} answered ${res.status} ${res.text.slice(0, 200)}`;
        const response = documented(op).responses[String(res.status)];
        assert.ok(response, `${where}: status not documented`);
        if (res.status >= 400) assert.ok(errorCodes(response).includes(res.body.error.code), `${where}: code not documented`);
        for (const [name, header] of Object.entries<any>(response.headers ?? {})) {
          if (header.required) assert.ok(res.headers.get(name), `${where}: documented header ${name} missing`);
        }
      }
    }
  });
});
