import assert from 'node:assert/strict';
import { checkConfigurationBlock, checkConfigurationPlatforms, checkSinglePostContent, checkThreadPlacement } from '../../src/posts/rules/configuration';
import { checkFirstComment } from '../../src/posts/rules/first-comment';
import { checkReplyText } from '../../src/posts/rules/reply';
import { xLinkOutcome } from '../../src/posts/rules/x-link-policy';
import { account, free, paid } from './fixtures';

const unsupported = (message: string) => [{ code: 'configuration_unsupported', message }];

describe('posts rules: configuration blocks', () => {
  it('a block on a platform that takes none, an unknown key, or an unused platform', () => {
    const used = new Set(['x', 'instagram'] as const);
    assert.deepEqual(checkConfigurationPlatforms({ x: {} }, used), unsupported('configuration.x: x takes no publishing options; only instagram and facebook do'));
    assert.deepEqual(checkConfigurationPlatforms({ tiktok: {} }, used), unsupported('configuration.tiktok: tiktok is not a platform; blocks are keyed by platform slug'));
    assert.deepEqual(checkConfigurationPlatforms({ facebook: { placement: 'story' } }, used), unsupported('configuration.facebook: no account in this request is on facebook'));
    assert.deepEqual(checkConfigurationPlatforms({ instagram: { placement: 'story' } }, used), []);
    assert.deepEqual(checkConfigurationPlatforms(undefined, used), []);
  });

  it('placements and the options each carries', () => {
    assert.deepEqual(checkConfigurationBlock('instagram', { placement: 'reel', cover: 'https://e.com/c.jpg', share_to_feed: true, trial_reel: true }), []);
    assert.deepEqual(checkConfigurationBlock('instagram', { placement: 'carousel' }), unsupported('configuration.instagram.placement: carousel is not an instagram placement; use feed, story or reel'));
    assert.deepEqual(
      checkConfigurationBlock('instagram', { cover: 'https://e.com/c.jpg' }),
      unsupported('configuration.instagram.cover is not carried by an instagram feed; it applies to an instagram reel'),
    );
    assert.deepEqual(
      checkConfigurationBlock('instagram', { placement: 'story', collaborators: ['a'] }),
      unsupported('configuration.instagram.collaborators is not carried by an instagram story; it applies to an instagram feed and an instagram reel'),
    );
    assert.deepEqual(checkConfigurationBlock('instagram', { music: 'x' }), unsupported('configuration.instagram.music is not an instagram option'));
    assert.deepEqual(checkConfigurationBlock('facebook', { placement: 'story', link: 'https://e.com' }), unsupported('configuration.facebook.link is not carried by a facebook story; it applies to a facebook feed'));
    assert.deepEqual(checkConfigurationBlock('x', { placement: 'feed' }), unsupported('configuration.x: x takes no publishing options; only instagram and facebook do'));
  });

  it('option values of the wrong type are bad_request', () => {
    assert.deepEqual(checkConfigurationBlock('instagram', { collaborators: 'bob' }), [{ code: 'bad_request', message: 'configuration.instagram.collaborators: must be an array of usernames' }]);
    assert.deepEqual(checkConfigurationBlock('facebook', { link: 'example.com' }), [{ code: 'bad_request', message: 'configuration.facebook.link: must be an http(s) URL' }]);
    assert.deepEqual(
      checkConfigurationBlock('instagram', { placement: 'reel', video_cover_timestamp_ms: -1 }),
      [{ code: 'bad_request', message: 'configuration.instagram.video_cover_timestamp_ms: must be a whole number of milliseconds, 0 or more' }],
    );
  });

  it('a story or reel carries no text and no first comment', () => {
    assert.deepEqual(checkSinglePostContent('instagram', { placement: 'story' }, { text: '', firstComment: null }), []);
    assert.deepEqual(checkSinglePostContent('instagram', { placement: 'story' }, { text: 'hi', firstComment: null }), unsupported('an instagram story carries no text; send text as an empty string'));
    assert.deepEqual(checkSinglePostContent('instagram', { placement: 'reel' }, { text: '', firstComment: 'c' }), unsupported('an instagram reel carries no first comment; leave first_comment out'));
    assert.deepEqual(checkSinglePostContent('facebook', { placement: 'story' }, { text: 'hi', firstComment: null }), unsupported('a facebook story carries no text; send text as an empty string'));
    assert.deepEqual(checkSinglePostContent('instagram', null, { text: 'hi', firstComment: 'c' }), []);
  });

  it('a thread cannot be a story or a reel', () => {
    assert.deepEqual(checkThreadPlacement('instagram', { placement: 'reel' }), unsupported('A thread cannot be published as an instagram reel; stories and reels are single posts'));
    assert.deepEqual(checkThreadPlacement('facebook', { placement: 'story' }), unsupported('A thread cannot be published as a facebook story; stories and reels are single posts'));
    assert.deepEqual(checkThreadPlacement('instagram', { placement: 'feed' }), []);
  });
});

describe('posts rules: first comment', () => {
  it('only x, threads, instagram and facebook take one', () => {
    for (const platform of ['x', 'threads', 'instagram', 'facebook'] as const) assert.deepEqual(checkFirstComment(account(platform), 'hi'), []);
    for (const platform of ['bluesky', 'linkedin', 'mastodon', 'telegram'] as const) {
      assert.deepEqual(checkFirstComment(account(platform), 'hi'), [
        { code: 'first_comment_unsupported', message: `first_comment is not supported on ${platform}; only x, threads, instagram and facebook accept one` },
      ]);
    }
    assert.deepEqual(checkFirstComment(account('bluesky'), null), []);
  });

  it("is limited to the account's own post limit", () => {
    assert.deepEqual(checkFirstComment(account('x'), 'a'.repeat(280)), []);
    assert.deepEqual(checkFirstComment(account('x'), 'a'.repeat(281)), [
      { code: 'bad_request', message: 'first_comment is 281 characters as X counts them (links 23, emoji and CJK 2); x allows 280' },
    ]);
    assert.deepEqual(checkFirstComment(account('x', { premium: true }), 'a'.repeat(281)), []);
    assert.deepEqual(checkFirstComment(account('threads'), 'a'.repeat(501)), [{ code: 'bad_request', message: 'first_comment is 501 characters as Threads counts them (emoji count their UTF-8 bytes); threads allows 500' }]);
  });
});

describe('posts rules: x link posts', () => {
  const items = [{ field: 'text', text: 'read example.com' }, { field: 'first_comment', text: 'and https://x.com/a' }, { field: 'posts[2].text', text: 'v1.2.3 e.g.' }];

  it('Free: refused with 402, naming the field and the link', () => {
    const outcome = xLinkOutcome(account('x'), free, items);
    assert.deepEqual(outcome.violations, [
      { code: 'x_link_posts_require_paid_plan', message: 'text contains a link (example.com); x posts, replies and first comments with links need a paid plan or an account connected with your own X API credentials' },
      { code: 'x_link_posts_require_paid_plan', message: 'first_comment contains a link (https://x.com/a); x posts, replies and first comments with links need a paid plan or an account connected with your own X API credentials' },
    ]);
    assert.deepEqual(outcome.billed, []);
  });

  it('paid: billed per item, with a notice for drafts', () => {
    const outcome = xLinkOutcome(account('x'), paid, items);
    assert.deepEqual(outcome.violations, []);
    assert.deepEqual(outcome.billed, ['text', 'first_comment']);
    assert.deepEqual(outcome.notices[0], { code: 'x_link_post_billed', message: 'text contains a link (example.com); publishing it on x is billed $0.25 on top of the monthly quota' });
  });

  it('own credentials and other platforms are exempt', () => {
    assert.deepEqual(xLinkOutcome(account('x', { own_credentials: true }), free, items), { violations: [], notices: [], billed: [] });
    assert.deepEqual(xLinkOutcome(account('bluesky'), free, items), { violations: [], notices: [], billed: [] });
  });
});

describe('posts rules: comment reply text', () => {
  it('validation_error for no text or over the limit, naming the limit', () => {
    assert.deepEqual(checkReplyText(account('x'), undefined), [{ code: 'validation_error', message: 'text is required for a reply' }]);
    assert.deepEqual(checkReplyText(account('x'), ' '), [{ code: 'validation_error', message: 'text is required for a reply' }]);
    assert.deepEqual(checkReplyText(account('bluesky'), 'a'.repeat(300)), []);
    assert.deepEqual(checkReplyText(account('bluesky'), 'a'.repeat(301)), [{ code: 'validation_error', message: 'text is 301 characters; bluesky allows 300' }]);
  });
});
