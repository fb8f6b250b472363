import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { usageFor } from '../../src/quota/quota';
import { threadWorkflowId } from '../../src/threads/workflow-client';
import { insertXAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/**
 * A scheduled thread whose part's attempt never reported back (its mark open: a first part whose look a failing
 * renewal stopped waits for the renewal so, `requeueThreadAwaitingCredential`) may be live on the platform. Its
 * account switched off or disconnected meanwhile cancelled it (`deleted`, `account_*`, a `post.cancelled` per part:
 * "never went out"), as an attempt that then found the account off did; a post is `failed` saying it may be live
 * (`test/posts/open-attempt-account-end.test.ts`). A thread is one outcome: it fails whole, saying which part.
 * The open mark is written directly, as the wait for a renewal leaves it (reaching it through the stand-ins needs X's
 * token endpoint down and a look stopped by it, which no stand-in stages).
 */
describe('Threads: an account ended while a part of a scheduled thread may be live', function () {
  this.timeout(120_000);
  let h: PostsHarness;

  before(async () => {
    h = await startPostsHarness({ plan: 'pro' });
  });
  after(async () => h?.stop());
  afterEach(() => h.standIns.x.standIn.clearFaults());

  const rows = (threadId: string) => h.db.selectFrom('posts').selectAll().where('thread_id', '=', threadId).orderBy('thread_order').execute();
  const eventsOf = async (threadId: string, partIds: string[]) =>
    (
      await h.db
        .selectFrom('events')
        .select('type')
        .where(sql<boolean>`data->>'thread_id' = ${threadId} or data->>'id' = any(${partIds}::text[])`)
        .orderBy('id')
        .execute()
    ).map((e) => e.type);

  /** A scheduled x thread whose first part's attempt is open, and another of the same account never tried. */
  async function mayBeLive(text: string) {
    const account = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    await h.syncClock();
    const before = await usageFor(h.db, h.api.userId, h.now());
    const at = (minutes: number) => new Date(h.now().getTime() + minutes * 60_000).toISOString();
    const create = (head: string, minutes: number) =>
      h.api.request('POST', '/api/v1/threads', { body: { account_id: account.id, posts: [{ text: `${head} one` }, { text: `${head} two` }], first_comment: `${head} comment`, schedule_at: at(minutes) } });
    const res = await create(text, 30);
    assert.equal(res.status, 201, res.text);
    const later = await create(`${text}, later`, 120);
    assert.equal(later.status, 201, later.text);
    const threadId: string = res.body.data.thread_id;
    const [first] = await rows(threadId);
    await h.db.updateTable('posts').set({ publish_attempt_started_at: h.now(), publish_attempt_first_at: h.now() }).where('id', '=', first!.id).execute();
    return { account, threadId, laterId: later.body.data.thread_id as string, before };
  }

  for (const [end, request, said, reason] of [
    ['switched off', (id: string) => h.api.request('PATCH', `/api/v1/accounts/${id}`, { body: { active: false } }), 'the account was switched off', 'account_deactivated'],
    ['disconnected', (id: string) => h.api.request('DELETE', `/api/v1/accounts/${id}`), 'the account was disconnected', 'account_disconnected'],
  ] as const) {
    it(`${end}: that thread is failed whole saying part 1 may be live (refunded, thread.failed); the account's other thread is cancelled as before`, async () => {
      const { account, threadId, laterId, before } = await mayBeLive(`open part, then the account ${end}`);
      const res = await request(account.id);
      assert.equal(res.status, 200, res.text);
      const parts = await rows(threadId);
      assert.deepEqual(parts.map((p) => p.status), ['failed', 'failed'], `told cancelled though part 1 may be live on X: ${parts.map((p) => `${p.status} ${p.error_message}`).join('; ')}`);
      for (const part of parts) {
        assert.equal(
          part.error_message,
          `An earlier attempt to publish part 1 of this thread did not report back, so it may already be on the platform, and ${said} before Herald could check; check the account before sending it again.`,
        );
        assert.equal(part.publish_attempt_started_at, null);
      }
      assert.deepEqual([parts[1]!.first_comment_status, parts[1]!.first_comment_error], ['failed', 'The post was not published, so its first comment was not sent']);
      assert.deepEqual(await eventsOf(threadId, parts.map((p) => p.id)), ['thread.failed']);
      const reserved = await h.db.selectFrom('quota_reservations').select('state').where('post_id', 'in', parts.map((p) => p.id)).execute();
      assert.ok(reserved.length > 0 && reserved.every((r) => r.state === 'refunded'), JSON.stringify(reserved));
      const cancelled = await rows(laterId);
      assert.deepEqual(cancelled.map((p) => [p.status, p.error_message]), [['deleted', reason], ['deleted', reason]]);
      assert.deepEqual(await usageFor(h.db, h.api.userId, h.now()), before);
      // Its workflow, at its time, finds it settled and ends.
      assert.deepEqual(await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).result(), { outcome: 'gone' });
      assert.deepEqual((await rows(threadId)).map((p) => p.status), ['failed', 'failed']);
    });
  }

  it('an attempt that finds the account already off (its end missed the thread) fails it saying part 1 may be live, not cancelled', async () => {
    const { account, threadId } = await mayBeLive('open part, then the account off unseen');
    // The account's end committed without reaching this thread (the race the attempt's own check is for).
    await h.db.updateTable('accounts').set({ active: false, inactive_reason: 'deactivated' }).where('id', '=', account.id).execute();
    // The rollback's look for that part (its credentials are still stored) cannot tell: it stays "may be live". A look
    // that can tell settles it (found and deleted, or not there), and the thread is then cancelled with its account.
    const looks = { method: 'GET', path: /^\/2\/users\/[^/]+\/tweets$/ };
    h.standIns.x.standIn.inject(looks, { kind: 'reply', response: { status: 503, json: { title: 'Service Unavailable', status: 503 } } }, 100);
    const result = (await h.env.client.workflow.getHandle(threadWorkflowId(threadId)).result()) as { outcome: string; message?: string };
    assert.equal(result.outcome, 'failed', JSON.stringify([result, (await rows(threadId)).map((p) => [p.status, p.error_message])]));
    const parts = await rows(threadId);
    assert.deepEqual(parts.map((p) => p.status), ['failed', 'failed'], parts.map((p) => `${p.status} ${p.error_message}`).join('; '));
    assert.match(parts[0]!.error_message ?? '', /^An earlier attempt to publish this post did not report back, so it may already be on the platform, and the account was switched off before Herald could check; check the account before sending it again \(part 1 of 2\)\./);
    assert.deepEqual(await eventsOf(threadId, parts.map((p) => p.id)), ['thread.failed']);
  });
});
