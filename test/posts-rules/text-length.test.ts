import assert from 'node:assert/strict';
import { checkReplyText } from '../../src/posts/rules/reply';
import { checkDraftTextLength, checkTextLength, textLength } from '../../src/posts/rules/text-length';
import { account } from './fixtures';

const bad = (message: string) => ({ code: 'bad_request', message });
const check = (a: ReturnType<typeof account>, text: string, hasMedia = false) => checkTextLength(a, text, { field: 'text', hasMedia });

describe('posts rules: text limits per platform and account', () => {
  it('x standard: 280 passes, 281 is refused with the weighted count', () => {
    assert.equal(check(account('x'), 'a'.repeat(280)), null);
    assert.deepEqual(check(account('x'), 'a'.repeat(281)), bad('text is 281 characters as X counts them (links 23, emoji and CJK 2); x allows 280'));
  });

  it('x counts CJK and emoji double and links 23', () => {
    assert.equal(check(account('x'), '字'.repeat(140)), null);
    assert.deepEqual(check(account('x'), '字'.repeat(140) + '!'), bad('text is 281 characters as X counts them (links 23, emoji and CJK 2); x allows 280'));
    assert.equal(check(account('x'), `${'a'.repeat(256)} https://example.com/${'p'.repeat(200)}`), null);
    assert.equal(check(account('x'), `${'a'.repeat(257)} https://example.com/${'p'.repeat(200)}`)?.message, 'text is 281 characters as X counts them (links 23, emoji and CJK 2); x allows 280');
    assert.deepEqual(
      check(account('x'), `${'a'.repeat(256)} 👍 https://example.com`),
      bad('text is 283 characters as X counts them (links 23, emoji and CJK 2); x allows 280'),
    );
  });

  it('x premium: 25,000', () => {
    const premium = account('x', { premium: true });
    assert.equal(check(premium, 'a'.repeat(25_000)), null);
    assert.deepEqual(check(premium, 'a'.repeat(25_001)), bad('text is 25,001 characters as X counts them (links 23, emoji and CJK 2); x premium accounts allow 25,000'));
  });

  it('bluesky: 300 graphemes', () => {
    assert.equal(check(account('bluesky'), 'a'.repeat(300)), null);
    assert.deepEqual(check(account('bluesky'), 'a'.repeat(301)), bad('text is 301 characters; bluesky allows 300'));
    // A ZWJ family is one grapheme on Bluesky (and 25 UTF-8 bytes).
    assert.equal(check(account('bluesky'), '👨‍👩‍👧‍👦'.repeat(120)), null);
  });

  it('bluesky: 3,000 UTF-8 bytes beside the 300 graphemes (the post lexicon refuses more at publish)', () => {
    // 121 ZWJ families: 121 graphemes, 3,025 bytes.
    assert.deepEqual(check(account('bluesky'), '👨‍👩‍👧‍👦'.repeat(121)), bad('text is 3,025 bytes in UTF-8; bluesky allows 3,000 bytes'));
    assert.equal(check(account('bluesky'), `${'👨‍👩‍👧‍👦'.repeat(119)}${'é'.repeat(12)}a`), null);
    // Over both: the grapheme count is named first.
    assert.deepEqual(check(account('bluesky'), '👨‍👩‍👧‍👦'.repeat(301)), bad('text is 301 characters; bluesky allows 300'));
    // Other platforms have no byte limit.
    assert.equal(check(account('mastodon'), '👨‍👩‍👧‍👦'.repeat(20)), null);
  });

  it('telegram: 4,096, or 1,024 when the post carries media', () => {
    assert.equal(check(account('telegram'), 'a'.repeat(4_096)), null);
    assert.deepEqual(check(account('telegram'), 'a'.repeat(4_097)), bad('text is 4,097 characters; telegram allows 4,096'));
    assert.equal(check(account('telegram'), 'a'.repeat(1_024), true), null);
    assert.deepEqual(check(account('telegram'), 'a'.repeat(1_025), true), bad('text is 1,025 characters; telegram allows, when the post carries media, 1,024'));
  });

  it('the other platforms at their limits', () => {
    const limits = { linkedin: 3_000, threads: 500, mastodon: 500, instagram: 2_200, facebook: 63_206 } as const;
    for (const [platform, limit] of Object.entries(limits) as Array<[keyof typeof limits, number]>) {
      assert.equal(check(account(platform), 'a'.repeat(limit)), null, platform);
      assert.equal(check(account(platform), 'a'.repeat(limit + 1))?.code, 'bad_request', platform);
    }
    assert.deepEqual(check(account('facebook'), 'a'.repeat(63_207)), bad('text is 63,207 characters; facebook allows 63,206'));
  });

  it('threads counts every emoji as its UTF-8 bytes, any other character as one', () => {
    assert.deepEqual(['é', '字', '👍', '❤️', '👨‍👩‍👧‍👦', '🇫🇷', 'a👍b'].map((t) => textLength('threads', t)), [1, 1, 4, 6, 25, 8, 6]);
    assert.equal(check(account('threads'), `${'a'.repeat(496)}👍`), null);
    assert.deepEqual(check(account('threads'), `${'a'.repeat(497)}👍`), bad('text is 501 characters as Threads counts them (emoji count their UTF-8 bytes); threads allows 500'));
  });

  it('mastodon counts every http(s) link as 23', () => {
    assert.equal(textLength('mastodon', `see https://example.com/${'x'.repeat(100)}`), 4 + 23);
    assert.equal(check(account('mastodon'), `${'a'.repeat(476)} https://example.com/${'x'.repeat(100)}`), null);
    assert.deepEqual(check(account('mastodon'), `${'a'.repeat(477)} https://example.com/${'x'.repeat(100)}`), bad('text is 501 characters (links count 23); mastodon allows 500'));
  });

  it('mastodon counts a remote mention as its username and characters as grapheme clusters (docs.joinmastodon.org "Posting")', () => {
    assert.equal(textLength('mastodon', 'hi @alice@social.example.org and @bob'), 'hi @alice and @bob'.length);
    assert.equal(textLength('mastodon', 'mail me at alice@example.com'), 'mail me at alice@example.com'.length);
    assert.equal(textLength('mastodon', `https://example.com/@alice@social.example.org ${'👨‍👩‍👧‍👦'}é`), 23 + 1 + 1 + 1);
    const mention = '@alice@mastodon.example.social';
    assert.equal(check(account('mastodon'), `${mention} ${'a'.repeat(493)}`), null);
    assert.deepEqual(check(account('mastodon'), `${mention} ${'a'.repeat(494)}`), bad('text is 501 characters (links count 23); mastodon allows 500'));
    assert.equal(check(account('mastodon'), '👨‍👩‍👧‍👦'.repeat(500)), null);
    assert.deepEqual(check(account('mastodon'), '👍🏽'.repeat(501)), bad('text is 501 characters (links count 23); mastodon allows 500'));
    assert.equal(textLength('mastodon', 'a\r\nb'), 3);
  });

  it('threads takes at most 5 different links in a text (Meta: more fail the container, THREADS_API__LINK_LIMIT_EXCEEDED)', () => {
    const links = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/${i}`).join(' ');
    assert.equal(check(account('threads'), links(5)), null);
    // The same link twice is one link; a bare domain is a link.
    assert.equal(check(account('threads'), `${links(4)} https://example.com/0 www.threads.com`), null);
    assert.deepEqual(check(account('threads'), `${links(5)} www.threads.com`), bad('text has 6 different links; threads allows 5 in a post'));
    assert.deepEqual(checkTextLength(account('threads'), links(6), { field: 'first_comment', hasMedia: false }), bad('first_comment has 6 different links; threads allows 5 in a post'));
    assert.deepEqual(checkReplyText(account('threads'), links(6)), [{ code: 'validation_error', message: 'text has 6 different links; threads allows 5 in a post' }]);
    assert.equal(check(account('x', { premium: true }), links(6)), null);
    assert.equal(check(account('mastodon'), links(6)), null);
  });

  it('premium only matters on x', () => {
    assert.equal(check(account('bluesky', { premium: true }), 'a'.repeat(301))?.code, 'bad_request');
  });

  it('drafts: 25,000 characters on any platform', () => {
    assert.equal(checkDraftTextLength('a'.repeat(25_000), 'text'), null);
    assert.deepEqual(checkDraftTextLength('a'.repeat(25_001), 'posts[2].text'), bad('posts[2].text is 25,001 characters; a draft allows 25,000'));
  });
});
