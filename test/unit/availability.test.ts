import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors';
import { DEFAULT_COMING_SOON, parseComingSoon, requireAvailablePlatform } from '../../src/platforms/availability';

describe('platform availability', () => {
  const comingSoon = parseComingSoon(DEFAULT_COMING_SOON);
  const refusal = (code: string, message: RegExp) => (err: unknown) =>
    err instanceof ApiError && err.code === code && message.test(err.message);

  it('answers the eight platforms', () => {
    for (const slug of ['x', 'bluesky', 'linkedin', 'threads', 'mastodon', 'instagram', 'facebook', 'telegram']) {
      assert.equal(requireAvailablePlatform(slug, comingSoon), slug);
    }
  });

  it('announces coming-soon platforms and features with 501 platform_coming_soon', () => {
    assert.throws(() => requireAvailablePlatform('tiktok', comingSoon), refusal('platform_coming_soon', /TikTok is coming soon/));
    assert.throws(() => requireAvailablePlatform('facebook', comingSoon, 'comments'), refusal('platform_coming_soon', /Facebook comments/));
    assert.equal(requireAvailablePlatform('x', comingSoon, 'comments'), 'x');
  });

  it('lets the flag open a feature and close a platform', () => {
    const flags = parseComingSoon('mastodon');
    assert.equal(requireAvailablePlatform('facebook', flags, 'comments'), 'facebook');
    assert.throws(() => requireAvailablePlatform('mastodon', flags), refusal('platform_coming_soon', /Mastodon/));
  });

  it('refuses never-supported slugs with 501 and unknown ones with 400', () => {
    assert.throws(() => requireAvailablePlatform('snapchat', comingSoon), refusal('platform_unsupported', /not supported/));
    assert.throws(() => requireAvailablePlatform('myspace', comingSoon), refusal('bad_request', /Unknown platform "myspace"/));
  });
});
