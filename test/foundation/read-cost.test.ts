import assert from 'node:assert/strict';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../../src/db';
import { type TestApi, request, startApi } from '../helpers/api';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { seedPublishedThenDrafts } from '../helpers/listing-seed';
import { insertAccount } from '../posts/fixtures';

/**
 * What a read costs the database (issue 15): an authenticated read writes no WAL for the burst limiter or the key,
 * both listings of GET /api/v1/posts read a page off an index, past 20,000 newer drafts (migration 0085), and
 * GET /api/v1/posts/:id is one statement (with the limiter's occasional lease), and a page of
 * GET /api/v1/posts/:id/comments is two (issue 10).
 */
describe('read path: database cost', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let api: TestApi;
  /** Every statement the app sent that reads `posts`, with its parameters (captured through Kysely's log hook). */
  const postQueries: Array<{ sql: string; parameters: readonly unknown[] }> = [];
  const limiterStatements: string[] = [];
  /** Every statement the app sent through Kysely. */
  const appStatements: string[] = [];

  before(async () => {
    database = await createTestDatabase();
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: database.pool }),
      log: (event) => {
        if (event.level === 'query') appStatements.push(event.query.sql);
        if (event.level === 'query' && /from "posts"/.test(event.query.sql)) postQueries.push({ sql: event.query.sql, parameters: event.query.parameters });
      },
    });
    // The limiter sends its statements through the pool itself (not Kysely): counted here.
    const pool = new Proxy(database.pool, {
      get(target, name, receiver) {
        if (name !== 'query') return Reflect.get(target, name, receiver);
        return (config: { text?: string }, ...rest: unknown[]) => {
          if (typeof config === 'object' && config.text?.includes('rate_limits')) limiterStatements.push(config.text);
          return (target.query as (...args: unknown[]) => unknown)(config, ...rest);
        };
      },
    });
    api = await startApi({ database, deps: { db, pool } });
    await database.pool.query('create extension if not exists pg_walinspect');
  });
  after(() => api.close());

  it('writes no WAL for the burst limiter or the key on an authenticated read', async () => {
    assert.equal((await api.request('GET', '/api/v1/posts?limit=1')).status, 200); // first use: last_used_at, the limiter's row
    const { rows: files } = await database.pool.query<{ file: string }>(
      `select pg_relation_filenode(name)::text as file from unnest(array['rate_limits', 'api_keys', 'users']) name`,
    );
    const start = (await database.pool.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn')).rows[0]!.lsn;
    for (let i = 0; i < 20; i++) {
      const res = await api.request('GET', '/api/v1/posts?limit=1');
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-ratelimit-remaining'), String(118 - i), 'the limiter still counts every request');
    }
    // pg_get_wal_records_info reads only flushed WAL: wait for the WAL writer to flush what the reads wrote (they do not
    // wait for it), and a range with no WAL at all passes as it is.
    const end = (await database.pool.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn')).rows[0]!.lsn;
    for (let waited = 0; waited < 5_000; waited += 50) {
      const flushed = await database.pool.query<{ done: boolean }>('select pg_current_wal_flush_lsn() >= $1::pg_lsn as done', [end]);
      if (flushed.rows[0]!.done) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // A record that touches a page of one of those tables names its file in block_ref ("rel 1663/<db>/<file> ...").
    const { rows } =
      start === end
        ? { rows: [] }
        : await database.pool.query<{ resource_manager: string; record_type: string; block_ref: string }>(
            `select resource_manager, record_type, block_ref from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
             where block_ref ~ ('/(' || $3 || ') ')`,
            [start, end, files.map((f) => f.file).join('|')],
          );
    assert.deepEqual(rows, []);
  });

  async function plan(path: string) {
    postQueries.length = 0;
    const res = await api.request('GET', path);
    assert.equal(res.status, 200);
    const listing = postQueries.find((q) => /order by/.test(q.sql));
    assert.ok(listing, `the listing query of ${path} was captured`);
    const { rows } = await database.pool.query(`explain (analyze, format json) ${listing.sql}`, [...listing.parameters]);
    return { body: res.body, plan: (rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]!.Plan };
  }

  /**
   * The plan PostgreSQL keeps for the listing as the API process sends it, a named statement (src/db/precompiled.ts),
   * once it stops planning per call: the generic plan, which knows the parameters' types and not their values.
   */
  async function genericPlan(path: string) {
    postQueries.length = 0;
    assert.equal((await api.request('GET', path)).status, 200);
    const listing = postQueries.find((q) => /order by/.test(q.sql))!;
    return genericPlanOf(listing.sql, listing.parameters);
  }

  /** The generic plan of `text` run with `parameters`, as a prepared statement settles on it. */
  async function genericPlanOf(text: string, parameters: readonly unknown[]) {
    const client = await database.pool.connect();
    try {
      await client.query('set plan_cache_mode = force_generic_plan');
      await client.query(`prepare probed as ${text}`);
      const values = parameters.map((value) => (typeof value === 'number' ? String(value) : client.escapeLiteral(String(value))));
      const { rows } = await client.query(`explain (analyze, format json) execute probed(${values.join(', ')})`);
      return (rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]!.Plan;
    } finally {
      await client.query('deallocate probed; reset plan_cache_mode').catch(() => undefined);
      client.release();
    }
  }

  it('reads both listings off an index, past 20,000 newer drafts, with the plan per call and the generic plan', async () => {
    await seedPublishedThenDrafts(database.pool, api.userId, { published: 150, drafts: 20_000 });

    const published = await plan('/api/v1/posts?limit=100');
    assert.deepEqual(
      published.body.data.map((p: { text: string }) => p.text),
      Array.from({ length: 100 }, (_, i) => `published ${150 - i}`),
    );
    assert.deepEqual(indexesUsed(published.plan), ['posts_user_listing_idx']);
    // Read backwards: the index grows at its right end (migration 0150), the listing shows the newest first.
    assert.deepEqual(postsIndexScans(published.plan).map((n) => n['Scan Direction']), ['Backward']);
    assert.equal(nodes(published.plan).some((n) => n['Node Type'] === 'Sort'), false, 'no sort');
    assert.ok(rowsVisited(published.plan) <= 100, `visited ${rowsVisited(published.plan)} rows`);

    const drafts = await plan('/api/v1/posts?status=draft&limit=100');
    assert.deepEqual(
      drafts.body.data.map((p: { text: string }) => p.text),
      Array.from({ length: 100 }, (_, i) => `draft ${20000 - i}`),
    );
    assert.deepEqual(indexesUsed(drafts.plan), ['posts_user_status_listing_idx']);
    assert.equal(nodes(drafts.plan).some((n) => n['Node Type'] === 'Sort'), false, 'no sort');
    assert.ok(rowsVisited(drafts.plan) <= 100, `visited ${rowsVisited(drafts.plan)} rows`);

    // With hidden posts too, the same index in the same order (migration 0297: it holds hidden posts, and the index
    // the listing used to read walked every newer draft and sorted the page).
    const withHidden = await plan('/api/v1/posts?limit=100&include_hidden=true');
    assert.deepEqual(
      withHidden.body.data.map((p: { text: string }) => p.text),
      Array.from({ length: 100 }, (_, i) => `published ${150 - i}`),
    );
    assert.deepEqual(indexesUsed(withHidden.plan), ['posts_user_listing_idx']);
    assert.equal(nodes(withHidden.plan).some((n) => n['Node Type'].includes('Sort')), false, 'no sort');
    assert.ok(rowsVisited(withHidden.plan) <= 100, `visited ${rowsVisited(withHidden.plan)} rows`);

    // The same with the plan a prepared statement settles on: the default listing's constants are in its SQL, so
    // the generic plan still proves the partial index's predicate.
    for (const path of ['/api/v1/posts?limit=100', '/api/v1/posts?status=draft&limit=100', '/api/v1/posts?limit=100&include_hidden=true']) {
      const generic = await genericPlan(path);
      assert.equal(nodes(generic).some((n) => n['Node Type'] === 'Sort'), false, `${path}: no sort`);
      assert.ok(rowsVisited(generic) <= 100, `${path}: visited ${rowsVisited(generic)} rows`);
    }
    assert.deepEqual(indexesUsed(await genericPlan('/api/v1/posts?limit=100')), ['posts_user_listing_idx']);
  });

  it("reads a fan-out's and a thread's posts off their partial indexes (migration 0190), the generic plans too", async () => {
    const { rows } = await database.pool.query<{ group_id: string; thread_id: string }>('select gen_random_uuid()::text as group_id, gen_random_uuid()::text as thread_id');
    const { group_id: groupId, thread_id: threadId } = rows[0]!;
    await database.pool.query(
      `insert into posts (user_id, platform, text, status, published_at, group_id, thread_id, thread_order)
       select $1, 'x', 'unit ' || i, 'published', now(), case when i <= 3 then $2::uuid end, case when i > 3 then $3::uuid end, case when i > 3 then i - 3 end
       from generate_series(1, 6) i`,
      [api.userId, groupId, threadId],
    );
    await database.pool.query('analyze posts');
    const path = `/api/v1/posts?group_id=${groupId}&limit=100`;
    const group = await plan(path);
    assert.deepEqual(group.body.data.map((p: { text: string }) => p.text).sort(), ['unit 1', 'unit 2', 'unit 3']);
    assert.deepEqual(indexesUsed(group.plan), ['posts_group_idx']);
    assert.deepEqual(indexesUsed(await genericPlan(path)), ['posts_group_idx']);

    const parts = await genericPlanOf('select * from posts where thread_id = $1 order by thread_order', [threadId]);
    assert.deepEqual(indexesUsed(parts), ['posts_thread_idx']);
    assert.equal(nodes(parts).some((n) => n['Node Type'] === 'Sort'), false, 'in order off the index');
    const { rows: definitions } = await database.pool.query<{ indexdef: string }>(
      `select indexdef from pg_indexes where indexname in ('posts_group_idx', 'posts_thread_idx') order by indexname`,
    );
    assert.deepEqual(
      definitions.map((d) => d.indexdef.replace(/^.* USING btree /, '')),
      ['(group_id) WHERE (group_id IS NOT NULL)', '(thread_id, thread_order) WHERE (thread_id IS NOT NULL)'],
      'the posts outside a fan-out or a thread have no entries',
    );
  });

  it('GET /posts/:id reads its post in one statement, and the burst limiter asks the database for a fraction of requests', async () => {
    const listed = await api.request('GET', '/api/v1/posts?limit=1');
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const post = listed.body.data[0];
    const fresh = await api.newUser('free');
    await request(api.url, 'GET', '/api/v1/posts?limit=1', { key: fresh.apiKey }); // the key's first use writes last_used_at
    postQueries.length = 0;
    limiterStatements.length = 0;
    for (let i = 0; i < 20; i++) {
      const res = await request(api.url, 'GET', `/api/v1/posts/${post.id}`, { key: api.apiKey });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { data: post }, 'the same post as the listing shows');
    }
    assert.equal(postQueries.length, 20, 'one statement reads the post');
    assert.ok(limiterStatements.length <= 6, `${limiterStatements.length} limiter statements for 20 requests`);

    postQueries.length = 0;
    const theirs = await request(api.url, 'GET', `/api/v1/posts/${post.id}`, { key: fresh.apiKey });
    assert.equal(theirs.status, 404);
    assert.deepEqual(theirs.body, { error: { code: 'not_found', message: `Post ${post.id} was not found` } });
    assert.equal(postQueries.length, 1);
  });

  it('GET /posts/:id/comments reads a page in two statements: the post with its account, plan and sync state, then the page', async () => {
    const owner = await api.newUser('starter');
    const account = await insertAccount(api.deps.db, owner.userId, {
      platform: 'x', platform_account_id: 'cost-1', username: 'cost', credentials: { access_token: 'unused' },
    });
    const post = await api.deps.db
      .insertInto('posts')
      .values({ user_id: owner.userId, account_id: account.id, platform: 'x', text: 'read me', status: 'published', published_at: new Date(), platform_post_id: '1900' })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const text of ['first', 'second']) {
      await api.deps.db
        .insertInto('comments')
        .values({ post_id: post.id, platform: 'x', platform_comment_id: `c-${text}`, platform_parent_id: null, author_handle: 'fan', author_display_name: 'Fan', author_platform_id: '42', author_avatar_url: null, text, created_at: new Date() })
        .execute();
    }
    const path = `/api/v1/posts/${post.id}/comments?sync=false`;
    const first = await request(api.url, 'GET', path, { key: owner.apiKey }); // first listing: records last_listed_at
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.data.map((c: { text: string }) => c.text).sort(), ['first', 'second']);

    appStatements.length = 0;
    for (let i = 0; i < 5; i++) {
      const res = await request(api.url, 'GET', path, { key: owner.apiKey });
      assert.equal(res.status, 200);
      // next_sync_after reads "now" until a refresh has run: the rest answers as the first page did.
      assert.deepEqual({ ...res.body, meta: { ...res.body.meta, sync: { ...res.body.meta.sync, next_sync_after: null } } }, { ...first.body, meta: { ...first.body.meta, sync: { ...first.body.meta.sync, next_sync_after: null } } });
    }
    // last_listed_at is rewritten at most once a minute (a slow machine may cross one): not a read, not counted.
    const reads = appStatements.filter((s) => !/^insert into "comment_sync_states"/.test(s));
    assert.equal(reads.length, 10, `two statements a page, got:\n${reads.join('\n')}`);
    assert.equal(reads.filter((s) => /from "posts"/.test(s) && /"comment_sync_states"/.test(s) && /"users"/.test(s)).length, 5);
    assert.equal(reads.filter((s) => /from "comments"/.test(s)).length, 5);

    await request(api.url, 'GET', '/api/v1/posts?limit=1', { key: api.apiKey }); // that key in the cache, as the owner's
    appStatements.length = 0;
    const theirs = await request(api.url, 'GET', path, { key: api.apiKey });
    assert.deepEqual([theirs.status, theirs.body], [404, { error: { code: 'not_found', message: `Post ${post.id} was not found` } }]);
    assert.equal(appStatements.length, 1, "another user's post costs one statement");
  });
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

function nodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodes)];
}

/** The plan's scans of `posts` through an index. */
function postsIndexScans(node: PlanNode): PlanNode[] {
  return nodes(node).filter((n) => n['Relation Name'] === 'posts' && n['Index Name']);
}

function indexesUsed(node: PlanNode): string[] {
  return postsIndexScans(node).map((n) => n['Index Name']!);
}

/** Rows of `posts` the plan read: those it returned plus those it read and threw away. */
function rowsVisited(node: PlanNode): number {
  return nodes(node)
    .filter((n) => n['Relation Name'] === 'posts')
    .reduce((sum, n) => sum + n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0), 0);
}
