import assert from 'node:assert/strict';
import { insertMastodonAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';
import { commentsConfig, connectAccount, publish } from './actions-fixtures';

/**
 * What one refresh asks of bluesky and mastodon, and the time a bluesky comment carries (README "Comment listing and
 * sync", 2026-12-07, fix-comment-sync-two). Both answer a post's whole reply tree in one call and Herald pages it (50 and
 * 40 a page): a refresh asks once, not once per page. A bluesky reply's time is the AppView's `indexedAt`, not the
 * `createdAt` its author's client wrote.
 */
describe('comment sync: one read per refresh, bluesky times', function () {
  this.timeout(300_000);
  let h: PostsHarness;

  before(async () => {
    h = await startPostsHarness({ plan: 'agent', config: commentsConfig() });
  });
  after(async () => h?.stop());

  const listAll = async (postId: string) => {
    await h.syncClock();
    const first = await h.api.request('GET', `/api/v1/posts/${postId}/comments?sync=true&limit=100`);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.meta.sync.status, 'ok', JSON.stringify(first.body.meta.sync));
    const all = [...first.body.data];
    for (let cursor = first.body.meta.next_cursor; cursor; ) {
      const next = await h.api.request('GET', `/api/v1/posts/${postId}/comments?sync=false&limit=100&cursor=${cursor}`);
      all.push(...next.body.data);
      cursor = next.body.meta.next_cursor;
    }
    return all as Array<{ text: string; created_at: string; platform_comment_id: string }>;
  };

  const blueskyAccount = async () => {
    const { bluesky } = h.standIns;
    const me = bluesky.addAccount({ handle: `reads${Math.floor(Math.random() * 1e9)}.bsky.test` });
    return connectAccount(h, { platform: 'bluesky', handle: me.handle, app_password: me.appPassword, service_url: bluesky.origin });
  };

  it('mastodon: a refresh of three pages of replies fetches the context once', async () => {
    const { mastodon } = h.standIns;
    const account = await insertMastodonAccount(h.db, h.api.userId, mastodon);
    const post = await publish(h, account.id, 'many replies on mastodon');
    const fan = mastodon.addAccount('manyfan');
    for (let i = 0; i < 100; i += 1) mastodon.addReply(post.platform_post_id, fan, `toot reply ${i}`);

    const listed = await listAll(post.id);
    assert.equal(listed.length, 100, 'every page read and stored');
    assert.equal(mastodon.standIn.calls('GET', `/api/v1/statuses/${post.platform_post_id}/context`).length, 1);
  });

  it('bluesky: a refresh of three pages of replies fetches the thread once', async () => {
    const { bluesky } = h.standIns;
    const account = await blueskyAccount();
    const post = await publish(h, account.id, 'many replies on bluesky');
    const fan = bluesky.addAccount({ handle: `manyfan${Math.floor(Math.random() * 1e9)}.bsky.test` });
    for (let i = 0; i < 120; i += 1) bluesky.reply(post.platform_post_id, fan, `sky reply ${i}`);
    const threads = () => bluesky.standIn.calls('GET', /app\.bsky\.feed\.getPostThread/).filter((c) => c.query.uri === post.platform_post_id).length;

    const listed = await listAll(post.id);
    assert.equal(listed.length, 120, 'every page read and stored');
    assert.equal(threads(), 1);
  });

  it('bluesky: a reply\'s time is when Bluesky indexed it, not the createdAt its client wrote (years ahead or back)', async () => {
    const { bluesky } = h.standIns;
    const account = await blueskyAccount();
    const post = await publish(h, account.id, 'replies dated oddly');
    const fan = bluesky.addAccount({ handle: `oddfan${Math.floor(Math.random() * 1e9)}.bsky.test` });
    const ahead = bluesky.reply(post.platform_post_id, fan, 'dated ahead', new Date('2099-01-01T00:00:00Z'));
    const back = bluesky.reply(post.platform_post_id, fan, 'dated back', new Date('1990-01-01T00:00:00Z'));
    const plain = bluesky.reply(post.platform_post_id, fan, 'dated plainly');
    // Indexed a second apart, in the order written.
    [ahead, back, plain].forEach((r, i) => (r.indexedAt = new Date(Date.now() - (3 - i) * 1000).toISOString()));

    const listed = await listAll(post.id);
    const timeOf = Object.fromEntries(listed.map((c) => [c.text, c.created_at]));
    assert.deepEqual(timeOf, { 'dated ahead': ahead.indexedAt, 'dated back': back.indexedAt, 'dated plainly': plain.indexedAt });
    assert.equal(listed[0].text, 'dated plainly', 'the newest first, not the one dated ahead');
    const since = await h.api.request('GET', `/api/v1/posts/${post.id}/comments?sync=false&since=${encodeURIComponent(plain.indexedAt)}`);
    assert.deepEqual(since.body.data.map((c: { text: string }) => c.text), [], 'a reply dated ahead does not pass every since');
  });
});
