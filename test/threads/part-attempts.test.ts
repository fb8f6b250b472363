import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createActivities } from '../../activities';
import { insertTelegramAccount, insertXAccount } from '../posts/fixtures';
import { harnessActivities, startPostsHarness, type PostsHarness } from '../posts/harness';

/**
 * A thread part's send can run again (an immediate thread's parts go out from a local activity, `publishThreadNow`,
 * which runs again when its workflow task is lost): it marks its attempt first, as a post's does, and a part whose id
 * is stored is answered from its row.
 */
describe('Threads: a part sent again never goes out twice', function () {
  let h: PostsHarness;
  let activities: ReturnType<typeof createActivities>;
  before(async () => {
    h = await startPostsHarness({ plan: 'agent' });
    activities = harnessActivities(h);
  });
  after(async () => h?.stop());

  /** A `publishing` thread's rows, in order (as its claim leaves them). */
  async function publishingThread(accountId: string, platform: 'x' | 'telegram', texts: string[]): Promise<string[]> {
    const threadId = randomUUID();
    const rows = await h.db
      .insertInto('posts')
      .values(texts.map((text, i) => ({ user_id: h.api.userId, account_id: accountId, platform, text, status: 'publishing' as const, thread_id: threadId, thread_order: i + 1 })))
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }
  const stored = (postId: string) => h.db.selectFrom('posts').select(['platform_post_id', 'publish_attempt_started_at']).where('id', '=', postId).executeTakeFirstOrThrow();

  it('a part whose id is stored is answered from its row, not sent again; its attempt is closed', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const [one] = await publishingThread(x.id, 'x', ['stored part one', 'stored part two']);
    const first = await activities.publishThreadPart({ postId: one!, replyTo: null });
    const again = await activities.publishThreadPart({ postId: one!, replyTo: null });
    assert.ok(first.ok && again.ok);
    assert.deepEqual(again, first);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'stored part one').length, 1);
    assert.deepEqual(await stored(one!), { platform_post_id: first.platformPostId, publish_attempt_started_at: null });
  });

  it('a part sent but not stored (the worker stopped between) is looked up on x: found, not created again', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const [one, two] = await publishingThread(x.id, 'x', ['looked up one', 'looked up two']);
    const root = await activities.publishThreadPart({ postId: one!, replyTo: null });
    assert.ok(root.ok);
    const replyTo = { platformPostId: root.platformPostId, rootPlatformPostId: root.platformPostId };
    const sent = await activities.publishThreadPart({ postId: two!, replyTo });
    assert.ok(sent.ok);
    // Back to the state of a worker that stopped between the platform's answer and the write of the id.
    await h.db.updateTable('posts').set({ platform_post_id: null, platform_post_url: null, publish_attempt_started_at: new Date() }).where('id', '=', two!).execute();
    const again = await activities.publishThreadPart({ postId: two!, replyTo });
    assert.deepEqual(again, sent);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'looked up two').length, 1);
  });

  it('an open attempt where the platform can neither be searched nor repeated safely (telegram) is reported unknown, not resent', async () => {
    const { account, chat } = await insertTelegramAccount(h.db, h.api.userId, h.standIns.telegram);
    const [one] = await publishingThread(account.id, 'telegram', ['maybe sent part']);
    await h.db.updateTable('posts').set({ publish_attempt_started_at: new Date() }).where('id', '=', one!).execute();
    const attempt = await activities.publishThreadPart({ postId: one!, replyTo: null });
    assert.deepEqual(attempt.ok ? attempt : [attempt.kind, attempt.message], [
      'unknown_outcome',
      'Telegram did not confirm whether the post was published; check the account before sending it again.',
    ]);
    assert.deepEqual(h.standIns.telegram.messages(chat.id), []);
  });

  it('a refusal clears the mark, so the part’s quick retry is a plain first attempt', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const [one] = await publishingThread(x.id, 'x', ['refused part once']);
    h.standIns.x.standIn.inject({ method: 'POST', path: '/2/tweets' }, { kind: 'reply', response: { status: 409, json: { title: 'Conflict', type: 'about:blank', status: 409 } } });
    const refused = await activities.publishThreadPart({ postId: one!, replyTo: null });
    assert.equal(refused.ok, false);
    assert.equal((await stored(one!)).publish_attempt_started_at, null);
    assert.equal((await activities.publishThreadPart({ postId: one!, replyTo: null })).ok, true);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'refused part once').length, 1);
  });

  it('a thread cancelled meanwhile: nothing is sent', async () => {
    const x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    const [one] = await publishingThread(x.id, 'x', ['cancelled part']);
    await h.db.updateTable('posts').set({ status: 'deleted' }).where('id', '=', one!).execute();
    const attempt = await activities.publishThreadPart({ postId: one!, replyTo: null });
    assert.equal(attempt.ok ? 'ok' : attempt.kind, 'not_publishing');
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'cancelled part').length, 0);
  });
});
