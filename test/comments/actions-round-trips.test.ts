import assert from 'node:assert/strict';
import { loadCommentTarget } from '../../src/comments/actions-target';
import type { DatabaseHandle } from '../../src/db';
import { testDatabase } from '../helpers/db';
import { countingDatabase } from '../helpers/counting-database';
import { testSealedBox } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';
import { comment, commentsConfig, connectAccount, publish, snapshot } from './actions-fixtures';

/**
 * Database round trips of what a comment action (reply, hide, delete) checks before it reaches a platform: the post
 * and its account in one joined statement, then the comment. Every statement of a pool of its own is counted, so a
 * round trip that comes back fails this test.
 */
const commentTargetStatements = 2;

describe('comment actions: database round trips of the target', function () {
  this.timeout(180_000);
  let h: PostsHarness;
  let counted: DatabaseHandle | undefined;
  const statements: string[] = [];
  const rt = () => ({ db: counted!.db, config: commentsConfig(), sealedBox: testSealedBox });

  before(async () => {
    h = await startPostsHarness({ plan: 'starter', config: commentsConfig() });
    counted = countingDatabase((await testDatabase()).url, statements);
  });
  after(async () => {
    await counted?.close();
    await h?.stop();
  });

  it(`reads the post, its account and the comment in ${commentTargetStatements} statements, every column as stored`, async () => {
    const { page } = h.standIns.facebook;
    const facebook = await connectAccount(h, { platform: 'facebook', page_id: page.id, access_token: page.token });
    const post = await publish(h, facebook.id, 'counted comment target');
    h.standIns.facebook.addExternalComment(post.platform_post_id, 'counted remark');
    await snapshot(h, post.id);
    const c = await comment(h, post.id, 'counted remark');
    // Connections opened outside the count: the pool's first connects are not the action's round trips.
    await Promise.all([counted!.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute(), counted!.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute()]);
    statements.length = 0;

    const target = await loadCommentTarget(rt(), h.api.userId, post.id, c.id, 'hide');

    assert.equal(statements.length, commentTargetStatements, statements.join('\n'));
    assert.deepEqual(target.post, await h.db.selectFrom('posts').selectAll().where('id', '=', post.id).executeTakeFirstOrThrow());
    assert.deepEqual(target.account, await h.db.selectFrom('accounts').selectAll().where('id', '=', facebook.id).executeTakeFirstOrThrow());
    assert.equal(target.comment.id, c.id);
    assert.equal(target.ctx.account?.id, facebook.id);
  });

  it("another user's post is 404 in one statement, and so is an id that is not a UUID in none", async () => {
    const other = await h.api.newUser('starter');
    const { page } = h.standIns.facebook;
    const account = await connectAccount(h, { platform: 'facebook', page_id: page.id, access_token: page.token });
    const post = await publish(h, account.id, 'not yours to moderate');
    statements.length = 0;
    await assert.rejects(loadCommentTarget(rt(), other.userId, post.id, '00000000-0000-4000-8000-000000000000', 'delete'), {
      code: 'not_found',
      message: `Post ${post.id} was not found`,
    });
    assert.equal(statements.length, 1, statements.join('\n'));
    statements.length = 0;
    await assert.rejects(loadCommentTarget(rt(), h.api.userId, 'not-a-uuid', 'x', 'reply'), { code: 'not_found', message: 'Post not-a-uuid was not found' });
    assert.equal(statements.length, 0);
  });
});
