import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { z } from 'zod';
import { defineRoute } from '../../api/route';
import { claimRecordOf } from '../../src/idempotency/key-claim';
import { type TestApi, request, startApi } from '../helpers/api';
import { testDatabase } from '../helpers/db';

/**
 * What a keyed request made (`idempotency_keys.made`, written in the statement of its rows: `claimRecordOf`) outlives
 * the request's failure: a failure after it keeps the key claimed with its lease ended, and the next identical request
 * answers from it (the route's `resume`, a replay) instead of making it again (api/idempotency.ts rule 7).
 */
let executions = 0;
let resumed: unknown[] = [];
let failAfterMaking = false;
let failBeforeMaking = false;

const routes = [
  defineRoute({
    method: 'post',
    path: '/test/made',
    summary: 'makes a thing, recorded under its key',
    scope: 'posts:write',
    idempotent: true,
    body: z.strictObject({ text: z.string() }),
    responses: { 201: { description: 'made' } },
    handler: async ({ body, deps }) => {
      executions += 1;
      if (failBeforeMaking) throw new Error('the process fell over before making anything');
      const made = { serial: executions, text: body.text };
      const claimed = claimRecordOf(made);
      if (claimed) await sql`with ${claimed.cte} select ${claimed.holds} as held`.execute(deps.db);
      if (failAfterMaking) throw new Error('the process fell over after the commit');
      return { status: 201, body: { data: made } };
    },
    resume: async ({ made }) => {
      resumed.push(made);
      return { status: 201, body: { data: made } };
    },
  }),
];

describe('Idempotency-Key: what a request made outlives its failure', () => {
  let api: TestApi;
  before(async () => {
    api = await startApi({ routes, database: await testDatabase(), deps: { idempotency: { waitMs: 2_000, pollMs: 20 } } });
  });
  after(() => api.close());
  beforeEach(() => {
    executions = 0;
    resumed = [];
    failAfterMaking = false;
    failBeforeMaking = false;
  });

  const post = (key: string, text: string) => request(api.url, 'POST', '/api/v1/test/made', { key: api.apiKey, body: { text }, headers: { 'idempotency-key': key } });
  const row = (key: string) => api.deps.db.selectFrom('idempotency_keys').select(['state', 'made', 'locked_until']).where('key', '=', key).executeTakeFirst();

  it('an unexpected failure after the request made something keeps the key claimed (lease ended): the retry answers from it, replayed', async () => {
    failAfterMaking = true;
    const failed = await post('made-then-failed', 'one');
    assert.equal(failed.status, 500);
    const kept = await row('made-then-failed');
    assert.equal(kept?.state, 'in_progress');
    assert.deepEqual(kept?.made, { serial: 1, text: 'one' });
    assert.ok(kept!.locked_until.getTime() <= Date.now(), 'the lease ended with the failure');

    failAfterMaking = false;
    const retry = await post('made-then-failed', 'one');
    assert.deepEqual([retry.status, retry.headers.get('idempotent-replay'), retry.body], [201, 'true', { data: { serial: 1, text: 'one' } }]);
    assert.deepEqual([executions, resumed], [1, [{ serial: 1, text: 'one' }]]);
    const replay = await post('made-then-failed', 'one');
    assert.deepEqual([replay.status, replay.headers.get('idempotent-replay'), replay.text], [201, 'true', retry.text]);
    assert.equal(resumed.length, 1, 'the answer was stored: a plain replay');
  });

  it('a takeover of a claim whose process died after making something answers from it; a new window makes afresh', async () => {
    const first = await post('made-then-died', 'two');
    assert.equal(first.status, 201);
    await api.deps.db
      .updateTable('idempotency_keys')
      .set({ state: 'in_progress', locked_until: new Date(Date.now() - 1_000), response_status: null, response_body: null })
      .where('key', '=', 'made-then-died')
      .execute();
    const retry = await post('made-then-died', 'two');
    assert.deepEqual([retry.status, retry.headers.get('idempotent-replay'), retry.text], [201, 'true', first.text]);
    assert.equal(executions, 1);

    await api.deps.db.updateTable('idempotency_keys').set({ created_at: new Date(Date.now() - 25 * 3_600_000) }).where('key', '=', 'made-then-died').execute();
    const later = await post('made-then-died', 'two');
    assert.deepEqual([later.status, later.headers.get('idempotent-replay'), later.body], [201, null, { data: { serial: 2, text: 'two' } }]);
  });

  it('a failure before anything was made still gives the key back: the retry runs', async () => {
    failBeforeMaking = true;
    const failed = await post('failed-unmade', 'three');
    assert.equal(failed.status, 500);
    assert.equal(await row('failed-unmade'), undefined);
    failBeforeMaking = false;
    const retry = await post('failed-unmade', 'three');
    assert.deepEqual([retry.status, retry.headers.get('idempotent-replay'), retry.body], [201, null, { data: { serial: 2, text: 'three' } }]);
  });
});
