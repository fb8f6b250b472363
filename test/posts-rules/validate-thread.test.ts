import assert from 'node:assert/strict';
import { validateThreadRequest } from '../../src/posts/rules/validate-thread';
import { account, free, ids, paid, throwsApi } from './fixtures';

const now = new Date('2026-05-01T10:00:00.000Z');
const x = account('x');
const telegram = account('telegram');
const instagram = account('instagram');

describe('posts rules: validating a thread request', () => {
  it('a two-part x thread passes; first comment belongs to the thread', () => {
    const result = validateThreadRequest({ account_id: ids.x, posts: [{ text: 'one' }, { text: 'two' }], first_comment: 'c' }, { accounts: [x], plan: free, now });
    assert.deepEqual(result.accounts[0].body, {
      accountId: ids.x,
      parts: [
        { text: 'one', media: [], mediaSpelling: null },
        { text: 'two', media: [], mediaSpelling: null },
      ],
      firstComment: 'c',
      configuration: null,
    });
    assert.deepEqual(result.warnings, []);
  });

  it('needs at least two parts unless a draft', () => {
    throwsApi(() => validateThreadRequest({ account_id: ids.x, posts: [{ text: 'one' }] }, { accounts: [x], plan: free, now }), 'bad_request', 'A thread needs at least two parts; got 1');
    assert.deepEqual(validateThreadRequest({ account_id: ids.x, posts: [{ text: 'one' }], draft: true }, { accounts: [x], plan: free, now }).warnings, [
      { account_id: ids.x, platform: 'x', code: 'bad_request', message: 'A thread needs at least two parts; got 1' },
    ]);
  });

  it('a missing part text reads posts[i].text is required', () => {
    throwsApi(() => validateThreadRequest({ account_id: ids.x, posts: [{ text: 'one' }, { media_urls: [] }] }, { accounts: [x], plan: free, now }), 'bad_request', 'posts[1].text is required');
  });

  it('each part is held to the account limit and media rules, named by index', () => {
    throwsApi(
      () => validateThreadRequest({ account_ids: [ids.x], posts: [{ text: 'one' }, { text: 'b'.repeat(281) }] }, { accounts: [x], plan: free, now }),
      'bad_request',
      `Account ${ids.x}: posts[1].text is 281 characters as X counts them (links 23, emoji and CJK 2); x allows 280`,
    );
    throwsApi(
      () => validateThreadRequest({ account_id: ids.x, posts: [{ text: 'one', media_urls: ['https://e.com/a.png', 'https://e.com/b.mp4'] }, { text: 'two' }] }, { accounts: [x], plan: free, now }),
      'unsupported_media',
      'A video is always posted on its own; posts[0].media_urls has 2 items including a video',
    );
  });

  it('a thread cannot be a story or reel', () => {
    throwsApi(
      () =>
        validateThreadRequest(
          { account_id: ids.instagram, posts: [{ text: '', media_urls: ['https://e.com/a.mp4'] }, { text: '', media_urls: ['https://e.com/b.mp4'] }], configuration: { instagram: { placement: 'reel' } } },
          { accounts: [instagram], plan: free, now },
        ),
      'configuration_unsupported',
      'A thread cannot be published as an instagram reel; stories and reels are single posts',
    );
  });

  it('platforms without a reply chain: drafts warn thread_not_native; sends go ahead', () => {
    const parts = [{ text: 'one' }, { text: 'two' }];
    assert.deepEqual(validateThreadRequest({ account_id: ids.telegram, posts: parts }, { accounts: [telegram], plan: free, now }).warnings, []);
    assert.deepEqual(validateThreadRequest({ account_id: ids.telegram, posts: parts, draft: true }, { accounts: [telegram], plan: free, now }).warnings, [
      { account_id: ids.telegram, platform: 'telegram', code: 'thread_not_native', message: 'telegram has no reply chain; each of the 2 parts publishes as a standalone post' },
    ]);
  });

  it('x links: charged per part and for the first comment', () => {
    const result = validateThreadRequest(
      { account_id: ids.x, posts: [{ text: 'one' }, { text: 'two example.com' }, { text: 'three https://e.com' }], first_comment: 'www.e.de' },
      { accounts: [x], plan: paid, now },
    );
    assert.deepEqual(result.accounts[0].xLinkBilled, ['posts[1].text', 'posts[2].text', 'first_comment']);
    throwsApi(
      () => validateThreadRequest({ account_id: ids.x, posts: [{ text: 'one' }, { text: 'two example.com' }] }, { accounts: [x], plan: free, now }),
      'x_link_posts_require_paid_plan',
      'posts[1].text contains a link (example.com); x posts, replies and first comments with links need a paid plan or an account connected with your own X API credentials',
    );
  });

  it('drafts: part text over 25,000 is refused', () => {
    throwsApi(
      () => validateThreadRequest({ account_id: ids.x, posts: [{ text: 'a' }, { text: 'a'.repeat(25_001) }], draft: true }, { accounts: [x], plan: free, now }),
      'bad_request',
      'posts[1].text is 25,001 characters; a draft allows 25,000',
    );
  });
});
