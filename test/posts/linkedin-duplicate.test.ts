import assert from 'node:assert/strict';
import { createActivities } from '../../activities';
import { connectAccount } from '../comments/actions-fixtures';
import { linkedInError } from '../standins/linkedin';
import { harnessActivities, startPostsHarness, type PostsHarness } from './harness';

/**
 * A LinkedIn Page post whose create was answered 503 after LinkedIn made it: its attempt stays open, and when the
 * retry's look does not find it (the author finder lags), the create meets LinkedIn's 422 "duplicate of <urn>". That
 * post is the lost attempt's: it is recorded published, and LinkedIn has it once.
 */
describe('Posts: a LinkedIn duplicate refusal to the retry of an attempt that never reported back', function () {
  let h: PostsHarness;
  let activities: ReturnType<typeof createActivities>;
  before(async () => {
    h = await startPostsHarness({ plan: 'agent' });
    activities = harnessActivities(h);
  });
  after(async () => h?.stop());

  it('records the post LinkedIn names as the one published, without a second create', async () => {
    const li = h.standIns.linkedin;
    const account = await connectAccount(h, { platform: 'linkedin', access_token: li.member.token, organization_id: String(li.organization.id) });
    const text = 'landed, then 503, then the finder lagged';
    const row = await h.db
      .insertInto('posts')
      .values({ user_id: h.api.userId, account_id: account.id, platform: 'linkedin', text, status: 'publishing' })
      .returning('id')
      .executeTakeFirstOrThrow();
    li.standIn.inject({ method: 'POST', path: '/rest/posts' }, { kind: 'reply', thenHandle: true, response: linkedInError(503, 'Service Unavailable') });
    const first = await activities.publishToPlatform({ postId: row.id, now: Date.now() });
    assert.equal(first.ok ? 'ok' : first.kind, 'retryable');
    const made = [...li.posts.values()].filter((p) => p.commentary === text);
    assert.equal(made.length, 1, 'LinkedIn made the post before it answered 503');

    li.standIn.inject({ method: 'GET', path: '/rest/posts' }, { kind: 'reply', response: { json: { paging: { start: 0, count: 10, links: [] }, elements: [] } } });
    const retried = await activities.publishToPlatform({ postId: row.id, now: Date.now() });
    assert.deepEqual(retried.ok ? retried.platformPostId : retried, made[0].urn);
    assert.equal([...li.posts.values()].filter((p) => p.commentary === text).length, 1);
    assert.equal(li.standIn.calls('POST', '/rest/posts').length, 2, 'the retry was sent and refused as a duplicate, not made twice');
  });
});
