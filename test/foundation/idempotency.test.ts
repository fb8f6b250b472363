import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { z } from 'zod';
import { defineRoute } from '../../api/route';
import { AccountNotActiveError } from '../../src/accounts/not-active';
import { ApiError } from '../../src/errors';
import { createLogger } from '../../src/logger';
import { type TestApi, request, startApi } from '../helpers/api';
import { testDatabase } from '../helpers/db';

/** A create-like route: every execution gets a new serial, so a replay is told apart from a re-execution. */
let executions = 0;
let delayMs = 0;
let failNext: 'crash' | 'not_found' | null = null;
/** Per execution, in order, when set: its delay and failure (before `delayMs` and `failNext`). */
let scripted: { delayMs: number; fail?: 'crash' }[] = [];

const routes = [
  defineRoute({
    method: 'post',
    path: '/test/things',
    summary: 'creates a thing',
    scope: 'posts:write',
    idempotent: true,
    body: z.strictObject({ text: z.string() }),
    responses: { 201: { description: 'created' } },
    handler: async ({ body }) => {
      executions++;
      const serial = executions;
      const script = scripted.shift();
      const wait = script?.delayMs ?? delayMs;
      if (wait > 0) await sleep(wait);
      const failure = script ? (script.fail ?? null) : failNext;
      if (!script) failNext = null;
      if (failure === 'crash') throw new Error('boom');
      if (failure === 'not_found') throw new ApiError('not_found', 'account not found');
      return { status: 201, body: { data: { serial, text: body.text } }, headers: { Location: `/things/${serial}` } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/test/things/:id/retry',
    summary: 'a bodiless retry',
    scope: 'posts:write',
    idempotent: true,
    params: z.object({ id: z.string() }),
    responses: { 200: { description: 'retried' } },
    handler: async ({ params }) => {
      executions++;
      return { status: 200, body: { data: { id: params.id, serial: executions } } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/test/later',
    summary: 'refuses with the next of `refusals` while there is one, then succeeds',
    scope: 'posts:write',
    idempotent: true,
    body: z.strictObject({ n: z.number() }),
    responses: { 201: { description: 'done' } },
    handler: async () => {
      executions++;
      const refusal = refusals.shift();
      if (refusal) throw refusal;
      return { status: 201, body: { data: { serial: executions } } };
    },
  }),
];

/** What `/test/later` answers next (then 201). */
const refusals: ApiError[] = [];

describe('Idempotency-Key', () => {
  let a: TestApi;
  let b: TestApi;
  before(async () => {
    const database = await testDatabase();
    a = await startApi({ routes, database, deps: { idempotency: { waitMs: 3_000, pollMs: 20 } } });
    b = await startApi({ routes, database, deps: { idempotency: { waitMs: 3_000, pollMs: 20 } } });
  });
  after(async () => {
    await a.close();
    await b.close();
  });
  beforeEach(() => {
    executions = 0;
    delayMs = 0;
    failNext = null;
    scripted = [];
  });

  const post = (api: TestApi, key: string | null, body: unknown, path = '/api/v1/test/things', apiKey = a.apiKey) =>
    request(api.url, 'POST', path, { key: apiKey, body, headers: key === null ? {} : { 'idempotency-key': key } });

  it('replays the first response for the same key and body, with Idempotent-Replay: true', async () => {
    const first = await post(a, 'k-replay', { text: 'hello' });
    assert.equal(first.status, 201);
    assert.equal(first.headers.get('idempotent-replay'), null);
    const second = await post(b, 'k-replay', { text: 'hello' });
    assert.equal(second.status, 201);
    assert.equal(second.headers.get('idempotent-replay'), 'true');
    assert.equal(second.headers.get('location'), '/things/1');
    assert.deepEqual(second.body, first.body);
    assert.deepEqual(second.body, { data: { serial: 1, text: 'hello' } });
    assert.equal(executions, 1);
  });

  it('replays the exact bytes first sent, key order included (a client error too)', async () => {
    // Postgres jsonb would store {"serial","text"} as {"text","serial"} (shorter keys first).
    const first = await post(a, 'k-bytes', { text: 'héllo "quoted" 1e21' });
    assert.equal(first.text, '{"data":{"serial":1,"text":"héllo \\"quoted\\" 1e21"}}');
    const replay = await post(b, 'k-bytes', { text: 'héllo "quoted" 1e21' });
    assert.equal(replay.headers.get('idempotent-replay'), 'true');
    assert.equal(replay.text, first.text);

    failNext = 'not_found';
    const refused = await post(a, 'k-bytes-404', { text: 'x' });
    const refusedReplay = await post(b, 'k-bytes-404', { text: 'x' });
    assert.equal(refusedReplay.headers.get('idempotent-replay'), 'true');
    assert.equal(refusedReplay.text, refused.text);
    assert.equal(executions, 2);
  });

  it('treats a reordered but equal JSON body as the same request', async () => {
    const first = await request(a.url, 'POST', '/api/v1/test/things', {
      key: a.apiKey,
      rawBody: '{"text":"same"}',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k-canon' },
    });
    const second = await request(a.url, 'POST', '/api/v1/test/things', {
      key: a.apiKey,
      rawBody: '{ "text" : "same" }',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k-canon' },
    });
    assert.deepEqual(second.body, first.body);
    assert.equal(executions, 1);
  });

  it('answers 422 idempotency_key_reused for the same key with another body, path or method', async () => {
    await post(a, 'k-reuse', { text: 'one' });
    const otherBody = await post(a, 'k-reuse', { text: 'two' });
    assert.equal(otherBody.status, 422);
    assert.deepEqual(otherBody.body, {
      error: {
        code: 'idempotency_key_reused',
        message:
          'This Idempotency-Key was already used for a different request (POST /api/v1/test/things with another body); use a new key for a new request',
      },
    });
    const otherPath = await post(b, 'k-reuse', undefined, '/api/v1/test/things/t1/retry');
    assert.equal(otherPath.status, 422);
    assert.equal(otherPath.body.error.code, 'idempotency_key_reused');
    assert.equal(executions, 1);
  });

  it('answers 409 idempotency_in_progress while the first request still runs past the wait', async () => {
    const quick = await startApi({ routes, database: await testDatabase(), deps: { idempotency: { waitMs: 100, pollMs: 20 } } });
    try {
      delayMs = 1_000;
      const first = post(a, 'k-slow', { text: 'slow' });
      await sleep(150);
      const second = await post(quick, 'k-slow', { text: 'slow' });
      assert.equal(second.status, 409);
      assert.deepEqual(second.body, {
        error: {
          code: 'idempotency_in_progress',
          message: 'A request with this Idempotency-Key is still being processed; retry shortly to receive its response',
        },
      });
      assert.equal((await first).status, 201);
      const third = await post(quick, 'k-slow', { text: 'slow' });
      assert.equal(third.headers.get('idempotent-replay'), 'true');
      assert.equal(executions, 1);
    } finally {
      await quick.close();
    }
  });

  it('executes concurrent identical requests on two instances once, and every caller gets the same answer', async () => {
    delayMs = 300;
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) => post(i % 2 === 0 ? a : b, 'k-race', { text: 'race' })),
    );
    assert.equal(executions, 1);
    for (const res of responses) {
      assert.equal(res.status, 201);
      assert.deepEqual(res.body, { data: { serial: 1, text: 'race' } });
    }
    assert.equal(responses.filter((res) => res.headers.get('idempotent-replay') === 'true').length, 5);
  });

  it('answers 400 idempotency_key_invalid for a blank key or one over 255 characters', async () => {
    for (const [key, message] of [
      ['   ', 'Idempotency-Key must not be blank'],
      ['k'.repeat(256), 'Idempotency-Key must be at most 255 characters (got 256)'],
    ]) {
      const res = await post(a, key, { text: 'x' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { error: { code: 'idempotency_key_invalid', message } });
    }
    assert.equal(executions, 0);
    assert.equal((await post(a, 'k'.repeat(255), { text: 'x' })).status, 201);
  });

  it('stores and replays a client error the handler answered', async () => {
    failNext = 'not_found';
    const first = await post(a, 'k-404', { text: 'x' });
    assert.equal(first.status, 404);
    const second = await post(b, 'k-404', { text: 'x' });
    assert.equal(second.status, 404);
    assert.equal(second.headers.get('idempotent-replay'), 'true');
    assert.deepEqual(second.body, { error: { code: 'not_found', message: 'account not found' } });
    assert.equal(executions, 1);
  });

  it('does not store an unexpected failure, so the same key can be retried', async () => {
    failNext = 'crash';
    const first = await post(a, 'k-500', { text: 'x' });
    assert.equal(first.status, 500);
    const second = await post(a, 'k-500', { text: 'x' });
    assert.equal(second.status, 201);
    assert.equal(second.headers.get('idempotent-replay'), null);
    assert.equal(executions, 2);
  });

  it('answers what the request did when the database will not store its answer: not a 500, whose retry would run it again', async () => {
    // A real refusal by the database (no mock): a trigger refuses to complete this test's keys.
    await sql`create or replace function refuse_unstorable() returns trigger language plpgsql as $$
      begin
        if new.state = 'completed' and new.key like 'unstorable-%' then raise exception 'refused for the test'; end if;
        return new;
      end $$`.execute(a.deps.db);
    await sql`create trigger refuse_unstorable before update on idempotency_keys for each row execute function refuse_unstorable()`.execute(a.deps.db);
    try {
      const res = await post(a, 'unstorable-1', { text: 'done' });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(res.body, { data: { serial: 1, text: 'done' } });
      assert.equal(executions, 1);
    } finally {
      await sql`drop trigger refuse_unstorable on idempotency_keys`.execute(a.deps.db);
      await sql`drop function refuse_unstorable()`.execute(a.deps.db);
    }
  });

  describe('an answer the database will not store, past the claim\'s lease', () => {
    // The lease is short here so that it would run out within the test; the trigger refuses, as a real database
    // would (no mock), to complete this block's keys until it is dropped.
    let short: TestApi;
    before(async () => {
      short = await startApi({ routes, database: await testDatabase(), deps: { idempotency: { waitMs: 2_000, pollMs: 20, leaseMs: 3_000 } } });
      await sql`create or replace function refuse_late() returns trigger language plpgsql as $$
        begin
          if new.state = 'completed' and new.key like 'late-%' then raise exception 'refused for the test'; end if;
          return new;
        end $$`.execute(a.deps.db);
    });
    after(async () => {
      await sql`drop function refuse_late() cascade`.execute(a.deps.db);
      await short.close();
    });
    const refuseStores = () => sql`create trigger refuse_late before update on idempotency_keys for each row execute function refuse_late()`.execute(a.deps.db);
    const allowStores = () => sql`drop trigger if exists refuse_late on idempotency_keys`.execute(a.deps.db);
    afterEach(allowStores);

    it('keeps the key claimed and stores the answer once it can: a retry never runs the request again', async () => {
      await refuseStores();
      const first = await post(short, 'late-created', { text: 'once' });
      assert.equal(first.status, 201, first.text);
      await sleep(3_500); // past the first lease
      const meanwhile = await post(short, 'late-created', { text: 'once' });
      assert.deepEqual([meanwhile.status, meanwhile.body.error?.code], [409, 'idempotency_in_progress'], meanwhile.text);
      await allowStores();
      const retried = await post(short, 'late-created', { text: 'once' });
      assert.deepEqual([retried.status, retried.headers.get('idempotent-replay'), retried.text], [201, 'true', first.text]);
      assert.equal(executions, 1);
    });

    it('gives the key back when the unstored answer was a refusal that changed nothing: the retry runs at once', async () => {
      await refuseStores();
      failNext = 'not_found';
      const refused = await post(short, 'late-refused', { text: 'x' });
      assert.equal(refused.status, 404, refused.text);
      // Not 409 `idempotency_in_progress` until the lease (longer than the wait) ran out.
      const retried = await post(short, 'late-refused', { text: 'x' });
      assert.deepEqual([retried.status, retried.headers.get('idempotent-replay')], [201, null], retried.text);
      assert.equal(executions, 2);
    });
  });

  it('does not store a request refused by validation before it ran', async () => {
    const invalid = await post(a, 'k-invalid', { text: 5 });
    assert.equal(invalid.status, 400);
    const fixed = await post(a, 'k-invalid', { text: 'five' });
    assert.equal(fixed.status, 201);
  });

  it('keys records per user', async () => {
    const other = await a.newUser('free');
    await post(a, 'k-user', { text: 'mine' });
    const theirs = await post(a, 'k-user', { text: 'theirs' }, '/api/v1/test/things', other.apiKey);
    assert.equal(theirs.status, 201);
    assert.equal(theirs.headers.get('idempotent-replay'), null);
    assert.equal(executions, 2);
  });

  it('forgets a key after the 24-hour window', async () => {
    await post(a, 'k-old', { text: 'old' });
    await a.deps.db
      .updateTable('idempotency_keys')
      .set({ created_at: new Date(Date.now() - 25 * 3600 * 1000) })
      .where('key', '=', 'k-old')
      .execute();
    const again = await post(a, 'k-old', { text: 'new body is fine now' });
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replay'), null);
    assert.equal(executions, 2);
  });

  it('lets an identical request take over a claim whose process died (lease expired)', async () => {
    await post(a, 'k-dead', { text: 'x' });
    await a.deps.db
      .updateTable('idempotency_keys')
      .set({ state: 'in_progress', locked_until: new Date(Date.now() - 1000), response_status: null, created_at: new Date(Date.now() - 10 * 3_600_000) })
      .where('key', '=', 'k-dead')
      .execute();
    const res = await post(b, 'k-dead', { text: 'x' });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('idempotent-replay'), null);
    assert.equal(executions, 2);
    const kept = await a.deps.db.selectFrom('idempotency_keys').select('created_at').where('key', '=', 'k-dead').executeTakeFirstOrThrow();
    assert.ok(Date.now() - kept.created_at.getTime() > 9 * 3_600_000, 'the 24 h window still counts from the first use');
  });

  describe('a request that stalled past its lease and was taken over', () => {
    // The stall is the lease running out in the database (as if the first process froze and renewed nothing), so the
    // takeover happens while the first request is still running; the first one then finishes after the second.
    let stalled: TestApi;
    const lines: { level: string; msg: string; idempotencyKey?: string; status?: number }[] = [];
    before(async () => {
      stalled = await startApi({
        routes,
        database: await testDatabase(),
        deps: {
          idempotency: { waitMs: 3_000, pollMs: 20, leaseMs: 30_000 },
          logger: createLogger('warn', { write: (line: string) => void lines.push(JSON.parse(line)) }),
        },
      });
    });
    after(() => stalled.close());
    const expireLease = (key: string) =>
      a.deps.db.updateTable('idempotency_keys').set({ locked_until: new Date(Date.now() - 1_000) }).where('key', '=', key).execute();

    it('does not overwrite the answer the takeover stored: a replay answers what the first answered client got', async () => {
      scripted = [{ delayMs: 800 }, { delayMs: 0 }];
      const first = post(stalled, 'k-stale', { text: 'stale' });
      await sleep(150);
      await expireLease('k-stale');
      const second = await post(b, 'k-stale', { text: 'stale' });
      assert.deepEqual([second.status, second.headers.get('idempotent-replay'), second.body], [201, null, { data: { serial: 2, text: 'stale' } }]);
      // The stalled request's own client still gets what it did: its effects happened.
      assert.deepEqual((await first).body, { data: { serial: 1, text: 'stale' } });
      const replay = await post(a, 'k-stale', { text: 'stale' });
      assert.equal(replay.headers.get('idempotent-replay'), 'true');
      assert.equal(replay.text, second.text);
      assert.equal(executions, 2);
      const lost = lines.filter((line) => line.idempotencyKey === 'k-stale');
      assert.deepEqual(
        lost.map((line) => [line.level, line.status, line.msg]),
        [['warn', 201, 'Idempotency-Key claim lost to a takeover after its lease ran out; its answer was not stored']],
      );
    });

    it('does not release the takeover\'s claim when it fails: an identical request waits for the takeover', async () => {
      scripted = [{ delayMs: 600, fail: 'crash' }, { delayMs: 900 }];
      const first = post(stalled, 'k-stale-crash', { text: 'x' });
      await sleep(150);
      await expireLease('k-stale-crash');
      const second = post(b, 'k-stale-crash', { text: 'x' });
      assert.equal((await first).status, 500);
      const third = await post(a, 'k-stale-crash', { text: 'x' });
      assert.equal((await second).status, 201);
      assert.deepEqual([third.status, third.headers.get('idempotent-replay'), third.body], [201, 'true', { data: { serial: 2, text: 'x' } }]);
      assert.equal(executions, 2);
      assert.ok(lines.some((line) => line.idempotencyKey === 'k-stale-crash' && line.msg.endsWith('the key was not released')));
    });
  });

  it('works on a bodiless route (same key and path replays)', async () => {
    const first = await post(a, 'k-retry', undefined, '/api/v1/test/things/p1/retry');
    const second = await post(b, 'k-retry', undefined, '/api/v1/test/things/p1/retry');
    assert.equal(second.headers.get('idempotent-replay'), 'true');
    assert.deepEqual(second.body, first.body);
    assert.equal(executions, 1);
  });

  it('on a bodiless route, no body and {} are the same request (either may come first)', async () => {
    const first = await post(a, 'k-retry-empty', undefined, '/api/v1/test/things/p2/retry');
    const second = await post(b, 'k-retry-empty', {}, '/api/v1/test/things/p2/retry');
    assert.equal(second.status, 200, second.text);
    assert.equal(second.headers.get('idempotent-replay'), 'true');
    assert.deepEqual(second.body, first.body);
    const third = await post(a, 'k-empty-first', {}, '/api/v1/test/things/p3/retry');
    const fourth = await post(b, 'k-empty-first', undefined, '/api/v1/test/things/p3/retry');
    assert.deepEqual([fourth.status, fourth.headers.get('idempotent-replay'), fourth.body], [200, 'true', third.body]);
    assert.equal(executions, 2);
  });

  it('runs without a key as a plain request', async () => {
    await post(a, null, { text: 'x' });
    await post(a, null, { text: 'x' });
    assert.equal(executions, 2);
  });

  it('does not store a refusal that says "not now" (Retry-After, 429, 402, comment_permission_required, first_comment_not_retryable, an account not active): the same key executes again', async () => {
    const notNow = [
      new ApiError('first_comment_rate_limited', 'X is throttling', {}, { 'Retry-After': '30' }),
      new ApiError('usage_limit_exceeded', 'Monthly quota spent'),
      new ApiError('account_limit_reached', 'Account limit'),
      new ApiError('x_link_posts_require_paid_plan', 'Upgrade'),
      new ApiError('comment_permission_required', 'Reconnect the account'),
      new ApiError('first_comment_not_retryable', 'Another attempt is in flight'),
      new ApiError('bad_request', 'A 400 naming a wait', {}, { 'retry-after': '5' }),
      new AccountNotActiveError('Account 1 is not active'),
    ];
    for (const [i, refusal] of notNow.entries()) {
      refusals.push(refusal);
      const body = { n: i };
      const refused = await request(a.url, 'POST', '/api/v1/test/later', { key: a.apiKey, body, headers: { 'idempotency-key': `k-later-${i}` } });
      assert.deepEqual([refused.status, refused.body.error.code], [refusal.status, refusal.code]);
      const retried = await request(b.url, 'POST', '/api/v1/test/later', { key: a.apiKey, body, headers: { 'idempotency-key': `k-later-${i}` } });
      assert.equal(retried.status, 201, `${refusal.code}: ${retried.text}`);
      assert.equal(retried.headers.get('idempotent-replay'), null);
      const replayed = await request(a.url, 'POST', '/api/v1/test/later', { key: a.apiKey, body, headers: { 'idempotency-key': `k-later-${i}` } });
      assert.deepEqual([replayed.status, replayed.headers.get('idempotent-replay'), replayed.body], [201, 'true', retried.body], 'the success is stored');
    }
    assert.equal(executions, 2 * notNow.length);

    refusals.push(new ApiError('post_not_editable', 'A definite refusal'));
    const definite = await request(a.url, 'POST', '/api/v1/test/later', { key: a.apiKey, body: { n: 99 }, headers: { 'idempotency-key': 'k-later-definite' } });
    const again = await request(b.url, 'POST', '/api/v1/test/later', { key: a.apiKey, body: { n: 99 }, headers: { 'idempotency-key': 'k-later-definite' } });
    assert.deepEqual([definite.status, again.status, again.headers.get('idempotent-replay')], [409, 409, 'true'], 'other 4xx are still replayed');
  });

  it('is documented in the OpenAPI document of an idempotent route', async () => {
    const doc = (await request(a.url, 'GET', '/api/v1/openapi.json')).body;
    const operation = doc.paths['/api/v1/test/things'].post;
    assert.deepEqual(
      operation.parameters.map((p: { in: string; name: string; required?: boolean }) => [p.in, p.name, p.required ?? false]),
      [['header', 'Idempotency-Key', false]],
    );
    assert.deepEqual(Object.keys(operation.responses).sort(), ['201', '400', '401', '403', '409', '422', '429', '500']);
    assert.deepEqual(operation.responses['409'].content['application/json'].schema.properties.error.properties.code.enum, [
      'idempotency_in_progress',
    ]);
  });
});
