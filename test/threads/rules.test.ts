import assert from 'node:assert/strict';
import { createThreadActivities } from '../../activities/threads';
import type { AccountRow } from '../../src/db/tables/accounts';
import { createLogger } from '../../src/logger';
import { createPostsRuntime } from '../../src/posts/runtime';
import { usageMonth } from '../../src/quota/quota';
import { testConfig } from '../helpers/api';
import { insertAccount, insertMastodonAccount, insertXAccount, testSealedBox } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/** Every refusal of POST /api/v1/threads as a whole envelope; nothing written, nothing charged, nothing published. */
describe('POST /api/v1/threads: refusals', function () {
  this.timeout(120_000);
  let h: PostsHarness;
  let x: AccountRow;
  let mastodon: AccountRow;
  let instagram: AccountRow;

  before(async function () {
    h = await startPostsHarness({ plan: 'pro' });
    x = await insertXAccount(h.db, h.api.userId, h.standIns.x);
    mastodon = await insertMastodonAccount(h.db, h.api.userId, h.standIns.mastodon);
    instagram = await insertAccount(h.db, h.api.userId, { platform: 'instagram', platform_account_id: 'ig-1', username: 'igu', via: 'instagram', credentials: { access_token: 't' } });
  });
  after(async () => h?.stop());

  const refused = async (body: unknown, status: number, error: { code: string; message: string }, key?: string) => {
    const before = await h.db.selectFrom('posts').select('id').execute();
    const res = await h.api.request('POST', '/api/v1/threads', { body, ...(key ? { key } : {}) });
    assert.deepEqual(res.body, { error }, res.text);
    assert.equal(res.status, status);
    assert.equal((await h.db.selectFrom('posts').select('id').execute()).length, before.length, 'no row written');
  };

  it('a part without text: posts[1].text is required', async () => {
    await refused({ account_id: x.id, posts: [{ text: 'a' }, {}] }, 400, { code: 'bad_request', message: 'posts[1].text is required' });
  });

  it('one part is refused unless a draft', async () => {
    await refused({ account_id: x.id, posts: [{ text: 'only' }] }, 400, { code: 'bad_request', message: 'A thread needs at least two parts; got 1' });
  });

  it('a part over the platform limit names the part', async () => {
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: x.id, posts: [{ text: 'a' }, { text: 'b'.repeat(281) }] } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'bad_request');
    assert.match(res.body.error.message, /^posts\[1\]\./);
  });

  it('a first comment on a platform that takes none', async () => {
    const res = await h.api.request('POST', '/api/v1/threads', { body: { account_id: mastodon.id, posts: [{ text: 'a' }, { text: 'b' }], first_comment: 'c' } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'first_comment_unsupported');
    assert.match(res.body.error.message, /mastodon/i);
  });

  it('a story or a reel is a single post: a thread requesting one is refused', async () => {
    for (const placement of ['story', 'reel']) {
      await refused(
        { account_id: instagram.id, posts: [{ text: '', media_urls: ['https://example.com/a.jpg'] }, { text: '', media_urls: ['https://example.com/b.jpg'] }], configuration: { instagram: { placement } } },
        400,
        { code: 'configuration_unsupported', message: `A thread cannot be published as an instagram ${placement}; stories and reels are single posts` },
      );
    }
  });

  it('fan-out: the failing account is named with the Account <id>: prefix, nothing written', async () => {
    await refused({ account_ids: [x.id, mastodon.id], posts: [{ text: 'a' }, { text: 'b' }], first_comment: 'c' }, 400, {
      code: 'first_comment_unsupported',
      message: `Account ${mastodon.id}: ${(await h.api.request('POST', '/api/v1/threads', { body: { account_id: mastodon.id, posts: [{ text: 'a' }, { text: 'b' }], first_comment: 'c' } })).body.error.message}`,
    });
  });

  it('a thread crossing the Free quota line: 429 with the arithmetic of the shortfall, nothing published', async () => {
    const user = await h.api.newUser('free');
    const account = await insertXAccount(h.db, user.userId, h.standIns.x);
    await h.db.insertInto('usage_months').values({ user_id: user.userId, month: usageMonth(h.now()), posts: 28 }).execute();
    const res = await h.api.request('POST', '/api/v1/threads', { key: user.apiKey, body: { account_id: account.id, posts: [{ text: 'q1' }, { text: 'q2' }], first_comment: 'q3' } });
    assert.equal(res.status, 429, res.text);
    assert.equal(res.body.error.code, 'usage_limit_exceeded');
    assert.match(res.body.error.message, /^Monthly post quota reached: 28 of 30 posts used this month on the Free plan; this request needs 3 \(first comments count as posts\) and 2 are left \(resets \d{4}-\d{2}-01, UTC\)$/);
    assert.equal(h.standIns.x.tweets().filter((t) => t.text === 'q1').length, 0);
  });

  it('an unknown or foreign account is 404 not_found', async () => {
    const other = await h.api.newUser();
    await refused({ account_id: x.id, posts: [{ text: 'a' }, { text: 'b' }] }, 404, { code: 'not_found', message: `Account ${x.id} was not found` }, other.apiKey);
  });

  it('rollback_supported follows deleteSupported: instagram via instagram cannot delete, via facebook can', async () => {
    const rt = createPostsRuntime({ config: testConfig(), db: h.db, logger: createLogger('silent') }, { adapters: h.standIns.adapters, sealedBox: testSealedBox });
    const activities = createThreadActivities(rt);
    const viaFacebook = await insertAccount(h.db, h.api.userId, { platform: 'instagram', platform_account_id: 'ig-2', username: 'igf', via: 'facebook', credentials: { access_token: 't' } });
    for (const [account, supported] of [[instagram, false], [viaFacebook, true]] as const) {
      const threadId = (await h.db.selectNoFrom((eb) => eb.fn<string>('gen_random_uuid').as('id')).executeTakeFirstOrThrow()).id;
      await h.db
        .insertInto('posts')
        .values([1, 2].map((n) => ({ user_id: h.api.userId, account_id: account.id, platform: 'instagram' as const, text: `p${n}`, status: 'publishing' as const, thread_id: threadId, thread_order: n })))
        .execute();
      const claim = await activities.claimThread({ threadId, now: Date.now(), notBefore: 0 });
      assert.equal(claim.kind === 'publish' && claim.rollbackSupported, supported);
      await h.db.deleteFrom('posts').where('thread_id', '=', threadId).execute();
    }
  });
});
