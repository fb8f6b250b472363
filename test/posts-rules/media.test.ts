import assert from 'node:assert/strict';
import { checkMediaContent, checkRequestedMedia, type MediaContent } from '../../src/posts/rules/media';
import { validateMediaContents } from '../../src/posts/rules/validate-media-content';
import { account, ids, throwsApi } from './fixtures';

const urls = (...names: string[]) => ({ refs: names.map((n) => ({ url: `https://cdn.example.com/${n}` })), spelling: 'media_urls' as const });
const bad = (message: string) => [{ code: 'bad_request', message }];
const unsupported = (message: string) => [{ code: 'unsupported_media', message }];
const image = (mimeType: string, size: number): MediaContent => ({ mimeType, size, kind: 'image' });
const video = (mimeType: string, size: number, durationMs?: number | null): MediaContent => ({ mimeType, size, kind: 'video', durationMs });
const withAlt = (...alts: string[]) => ({ refs: alts.map((alt, i) => ({ url: `https://cdn.example.com/${i}.png`, alt })), spelling: 'media' as const });
const sized = (mimeType: string, width: number, height: number): MediaContent => ({ mimeType, size: 10, kind: 'image', width, height });
const content = (...contents: MediaContent[]) => ({ contents, spelling: 'media' as const });

describe('posts rules: media before download', () => {
  it('counts per platform: 4 on most, 10 on instagram/facebook/telegram, 1 on threads', () => {
    assert.deepEqual(checkRequestedMedia('x', null, urls('1.png', '2.png', '3.png', '4.png')), []);
    assert.deepEqual(checkRequestedMedia('x', null, urls('1.png', '2.png', '3.png', '4.png', '5.png')), bad('x takes at most 4 media items; got 5'));
    assert.deepEqual(checkRequestedMedia('telegram', null, urls(...Array.from({ length: 10 }, (_, i) => `${i}.png`))), []);
    assert.deepEqual(checkRequestedMedia('facebook', null, urls(...Array.from({ length: 11 }, (_, i) => `${i}.png`))), bad('facebook takes at most 10 media items; got 11'));
    assert.deepEqual(checkRequestedMedia('threads', null, urls('1.png', '2.png')), bad('threads takes at most 1 media item; got 2'));
  });

  it('video where images only, formats the platform does not take', () => {
    assert.deepEqual(checkRequestedMedia('bluesky', null, urls('clip.mp4')), unsupported('media_urls[0] is a video; bluesky takes JPEG, PNG, WebP and GIF images'));
    assert.deepEqual(checkRequestedMedia('linkedin', null, urls('a.png', 'b.webp')), unsupported('media_urls[1] is WebP; linkedin takes JPEG, PNG and GIF images'));
    assert.deepEqual(checkRequestedMedia('telegram', null, urls('clip.mov')), unsupported('media_urls[0] is MOV; telegram takes JPEG, PNG, GIF and WebP images and MP4 video'));
    assert.deepEqual(checkRequestedMedia('x', null, urls('photo.heic')), unsupported('media_urls[0] is HEIC; x takes JPEG, PNG, WebP and GIF images and MP4 and MOV video'));
    assert.deepEqual(checkRequestedMedia('x', null, urls('clip.mov')), []);
  });

  it('a video is posted on its own', () => {
    assert.deepEqual(checkRequestedMedia('x', null, urls('a.png', 'clip.mp4')), unsupported('A video is always posted on its own; media_urls has 2 items including a video'));
    assert.deepEqual(checkRequestedMedia('mastodon', null, urls('a.mp4', 'b.mp4')), unsupported('A video is always posted on its own; media_urls has 2 items including a video'));
  });

  it('x posts a GIF on its own (4 photos or 1 GIF); other platforms take a GIF among images', () => {
    assert.deepEqual(checkRequestedMedia('x', null, urls('a.png', 'b.gif')), unsupported('x posts a GIF on its own; media_urls has 2 items including a GIF'));
    assert.deepEqual(checkRequestedMedia('x', null, urls('a.gif', 'b.gif')), unsupported('x posts a GIF on its own; media_urls has 2 items including a GIF'));
    assert.deepEqual(checkRequestedMedia('x', null, urls('a.gif')), []);
    assert.deepEqual(checkRequestedMedia('mastodon', null, urls('a.png', 'b.gif', 'c.gif')), []);
    assert.deepEqual(checkRequestedMedia('bluesky', null, urls('a.gif', 'b.jpg')), []);
  });

  it('alt text up to the platform\'s limit in characters (x 1,000, mastodon 1,500); no limit where none is known', () => {
    assert.deepEqual(checkRequestedMedia('x', null, withAlt('a'.repeat(1_000))), []);
    assert.deepEqual(checkRequestedMedia('x', null, withAlt('a'.repeat(1_000), 'é'.repeat(1_001))), bad('media[1].alt is 1,001 characters; x takes alt text up to 1,000 characters'));
    // Characters are code points: an emoji is one, not the two UTF-16 units it takes.
    assert.deepEqual(checkRequestedMedia('x', null, withAlt('🐈'.repeat(1_000))), []);
    assert.deepEqual(checkRequestedMedia('mastodon', null, withAlt('a'.repeat(1_500))), []);
    assert.deepEqual(checkRequestedMedia('mastodon', null, withAlt('a'.repeat(1_501))), bad('media[0].alt is 1,501 characters; mastodon takes alt text up to 1,500 characters'));
    assert.deepEqual(checkRequestedMedia('bluesky', null, withAlt('a'.repeat(5_000))), []);
    assert.deepEqual(checkRequestedMedia('linkedin', null, withAlt('a'.repeat(5_000))), []);
    assert.deepEqual(checkRequestedMedia('x', null, withAlt('a'.repeat(1_001)), 'posts[1].'), bad('posts[1].media[0].alt is 1,001 characters; x takes alt text up to 1,000 characters'));
  });

  it('URLs without a known extension and uploads wait for their bytes', () => {
    assert.deepEqual(checkRequestedMedia('bluesky', null, urls('image?id=3', 'download')), []);
    assert.deepEqual(checkRequestedMedia('bluesky', null, { refs: [{ id: ids.media }], spelling: 'media_ids' }), []);
  });

  it('instagram requires media; placements decide the rules', () => {
    assert.deepEqual(checkRequestedMedia('instagram', null, { refs: [], spelling: null }), bad('instagram requires media; text-only posts are refused'));
    assert.deepEqual(checkRequestedMedia('instagram', { placement: 'feed' }, urls('clip.mp4')), unsupported('media_urls[0] is a video; instagram takes JPEG and PNG images'));
    assert.deepEqual(checkRequestedMedia('instagram', { placement: 'story' }, urls('clip.mp4')), []);
    assert.deepEqual(checkRequestedMedia('instagram', { placement: 'story' }, urls('a.png', 'b.png')), bad('an instagram story takes at most 1 media item; got 2'));
    assert.deepEqual(checkRequestedMedia('instagram', { placement: 'story' }, { refs: [], spelling: null }), bad('an instagram story requires one image or one video; text-only posts are refused'));
    assert.deepEqual(checkRequestedMedia('instagram', { placement: 'reel' }, urls('a.jpg')), unsupported('media_urls[0] is an image; an instagram reel takes MP4 and MOV video'));
    assert.deepEqual(checkRequestedMedia('instagram', { placement: 'reel' }, { refs: [], spelling: null }), bad('an instagram reel requires one video; text-only posts are refused'));
    assert.deepEqual(checkRequestedMedia('instagram', { placement: 'reel' }, urls('clip.mov')), []);
    assert.deepEqual(checkRequestedMedia('facebook', { placement: 'story' }, urls('a.jpg', 'b.jpg')), bad('a facebook story takes at most 1 media item; got 2'));
    assert.deepEqual(checkRequestedMedia('facebook', null, { refs: [], spelling: null }), []);
  });

  it('labels thread parts', () => {
    assert.deepEqual(checkRequestedMedia('bluesky', null, urls('a.mp4'), 'posts[1].'), unsupported('posts[1].media_urls[0] is a video; bluesky takes JPEG, PNG, WebP and GIF images'));
  });
});

describe('posts rules: media on real content', () => {
  it('sizes per platform, at and over the limit', () => {
    assert.deepEqual(checkMediaContent('x', null, content(image('image/png', 5_000_000))), []);
    assert.deepEqual(checkMediaContent('x', null, content(image('image/png', 5_000_001))), unsupported('media[0] is an image of 5,000,001 bytes; x accepts images up to 5 MB'));
    assert.deepEqual(checkMediaContent('bluesky', null, content(image('image/jpeg', 977_000))), []);
    assert.deepEqual(checkMediaContent('bluesky', null, content(image('image/jpeg', 1_200_000))), unsupported('media[0] is an image of 1.2 MB; bluesky accepts images up to 977 KB'));
    assert.deepEqual(checkMediaContent('telegram', null, content(video('video/mp4', 20_000_001))), unsupported('media[0] is a video of 20,000,001 bytes; telegram accepts videos up to 20 MB'));
    assert.deepEqual(checkMediaContent('mastodon', null, content(video('video/quicktime', 40_000_000))), []);
    assert.deepEqual(checkMediaContent('x', null, content(video('video/mp4', 600_000_000))), unsupported('media[0] is a video of 600 MB; x accepts videos up to 512 MB'));
  });

  it('content type read from the bytes decides, not the name', () => {
    assert.deepEqual(checkMediaContent('linkedin', null, content(image('image/webp', 10))), unsupported('media[0] is WebP; linkedin takes JPEG, PNG and GIF images'));
    assert.deepEqual(checkMediaContent('x', null, content(image('image/heic', 10))), unsupported('media[0] is image/heic; x takes JPEG, PNG, WebP and GIF images and MP4 and MOV video'));
    assert.deepEqual(checkMediaContent('bluesky', null, content(video('video/mp4', 10))), unsupported('media[0] is a video; bluesky takes JPEG, PNG, WebP and GIF images'));
    assert.deepEqual(checkMediaContent('x', null, content(image('image/jpeg; charset=binary', 10))), []);
  });

  it('the media layer facts fit as they are', () => {
    const facts = { mimeType: 'image/png', kind: 'image' as const, format: 'png', size: 6_200_000, width: null, height: null, durationMs: null };
    assert.deepEqual(checkMediaContent('x', null, { contents: [facts], spelling: 'media_ids' }), unsupported('media_ids[0] is an image of 6.2 MB; x accepts images up to 5 MB'));
  });

  it('a video with images is refused after download too', () => {
    assert.deepEqual(
      checkMediaContent('x', null, content(image('image/png', 10), video('video/mp4', 10))),
      unsupported('A video is always posted on its own; media has 2 items including a video'),
    );
  });

  it('a GIF with images on x is refused after download too (the bytes decide, whatever the URL said)', () => {
    assert.deepEqual(
      checkMediaContent('x', null, content(image('image/png', 10), image('image/gif', 10))),
      unsupported('x posts a GIF on its own; media has 2 items including a GIF'),
    );
    assert.deepEqual(checkMediaContent('x', null, content(image('image/gif', 10))), []);
  });

  it('x video from 0.5 to 140 s; a duration the file does not give is not checked; mastodon has no duration limit', () => {
    assert.deepEqual(checkMediaContent('x', null, content(video('video/mp4', 10, 500))), []);
    assert.deepEqual(checkMediaContent('x', null, content(video('video/mp4', 10, 140_000))), []);
    assert.deepEqual(checkMediaContent('x', null, content(video('video/mp4', 10, 140_001))), unsupported('media[0] is a video of 140.1 s; x accepts videos of 0.5 to 140 s'));
    assert.deepEqual(checkMediaContent('x', null, content(video('video/quicktime', 10, 499))), unsupported('media[0] is a video of 0.4 s; x accepts videos of 0.5 to 140 s'));
    assert.deepEqual(checkMediaContent('x', null, content(video('video/mp4', 10, 600_000))), unsupported('media[0] is a video of 600 s; x accepts videos of 0.5 to 140 s'));
    assert.deepEqual(checkMediaContent('x', null, content(video('video/mp4', 10, null))), []);
    assert.deepEqual(checkMediaContent('mastodon', null, content(video('video/mp4', 10, 600_000))), []);
  });

  it('telegram photos: width + height up to 10,000 pixels, sides up to 20:1; other platforms have no such limit', () => {
    assert.deepEqual(checkMediaContent('telegram', null, content(sized('image/png', 5_000, 5_000))), []);
    assert.deepEqual(checkMediaContent('telegram', null, content(sized('image/png', 480, 9_520))), []);
    assert.deepEqual(
      checkMediaContent('telegram', null, content(sized('image/png', 800, 12_000))),
      unsupported('media[0] is an image of 800 × 12,000 pixels; telegram accepts photos whose width and height add up to at most 10,000 pixels'),
    );
    assert.deepEqual(
      checkMediaContent('telegram', null, content(sized('image/jpeg', 10, 10), sized('image/jpeg', 2_100, 100))),
      unsupported('media[1] is an image of 2,100 × 100 pixels; telegram accepts photos whose long side is at most 20 times the short side'),
    );
    // A GIF alone goes as an animation, not a photo; among other items it goes as a photo.
    assert.deepEqual(checkMediaContent('telegram', null, content(sized('image/gif', 100, 2_500))), []);
    assert.equal(checkMediaContent('telegram', null, content(sized('image/png', 10, 10), sized('image/gif', 100, 2_500)))[0]?.code, 'unsupported_media');
    // Sizes the file does not give are not checked; videos are not photos.
    assert.deepEqual(checkMediaContent('telegram', null, content(image('image/png', 10))), []);
    assert.deepEqual(checkMediaContent('telegram', null, content({ mimeType: 'video/mp4', size: 10, kind: 'video', width: 100, height: 12_000 })), []);
    assert.deepEqual(checkMediaContent('mastodon', null, content(sized('image/png', 800, 12_000))), []);
  });

  it('instagram feed photos from 4:5 to 1.91:1 (protocols.md section 6), at each bound accepted; a story has no such bound', () => {
    assert.deepEqual(checkMediaContent('instagram', null, content(sized('image/jpeg', 1_080, 1_350), sized('image/png', 1_910, 1_000))), []);
    assert.deepEqual(
      checkMediaContent('instagram', null, content(sized('image/jpeg', 1_080, 1_080), sized('image/jpeg', 3_024, 4_032))),
      unsupported('media[1] is an image of 3,024 × 4,032 pixels; instagram accepts photos from 4:5 (portrait) to 1.91:1 (landscape) in width to height'),
    );
    assert.deepEqual(
      checkMediaContent('instagram', null, content(sized('image/jpeg', 1_911, 1_000))),
      unsupported('media[0] is an image of 1,911 × 1,000 pixels; instagram accepts photos from 4:5 (portrait) to 1.91:1 (landscape) in width to height'),
    );
    assert.deepEqual(checkMediaContent('instagram', { placement: 'story' }, content(sized('image/jpeg', 1_080, 1_920))), []);
  });

  it('threads photos up to 10:1 either way (protocols.md section 7)', () => {
    assert.deepEqual(checkMediaContent('threads', null, content(sized('image/jpeg', 3_200, 320))), []);
    assert.deepEqual(
      checkMediaContent('threads', null, content(sized('image/png', 320, 3_201))),
      unsupported('media[0] is an image of 320 × 3,201 pixels; threads accepts photos whose long side is at most 10 times the short side'),
    );
  });

  it('placements: instagram story video up to 100 MB, reel up to 300 MB', () => {
    assert.deepEqual(checkMediaContent('instagram', { placement: 'story' }, content(video('video/mp4', 100_000_000))), []);
    assert.deepEqual(checkMediaContent('instagram', { placement: 'story' }, content(video('video/mp4', 100_000_001))), unsupported('media[0] is a video of 100,000,001 bytes; an instagram story accepts videos up to 100 MB'));
    assert.deepEqual(checkMediaContent('instagram', { placement: 'reel' }, content(video('video/mp4', 300_000_000))), []);
  });

  it('placements: an instagram reel is a video of 3 s to 15 min (protocols.md); a story video has no length known', () => {
    const reel = { placement: 'reel' };
    assert.deepEqual(checkMediaContent('instagram', reel, content(video('video/mp4', 10, 3_000))), []);
    assert.deepEqual(checkMediaContent('instagram', reel, content(video('video/quicktime', 10, 900_000))), []);
    assert.deepEqual(checkMediaContent('instagram', reel, content(video('video/mp4', 10, 2_999))), unsupported('media[0] is a video of 2.9 s; an instagram reel accepts videos of 3 to 900 s'));
    assert.deepEqual(checkMediaContent('instagram', reel, content(video('video/mp4', 10, 900_001))), unsupported('media[0] is a video of 900.1 s; an instagram reel accepts videos of 3 to 900 s'));
    assert.deepEqual(checkMediaContent('instagram', reel, content(video('video/mp4', 10, null))), []);
    assert.deepEqual(checkMediaContent('instagram', { placement: 'story' }, content(video('video/mp4', 10, 900_001))), []);
  });
});

describe('posts rules: real content across a fan-out', () => {
  const accounts = { x: account('x'), bluesky: account('bluesky') };
  const lists = (size: number) => [{ spelling: 'media_urls' as const, contents: [image('image/jpeg', size)] }];

  it('a send is refused on the first account whose media does not fit, prefixed in a fan-out', () => {
    throwsApi(
      () =>
        validateMediaContents(
          [
            { account: accounts.x, configuration: null, lists: lists(2_000_000) },
            { account: accounts.bluesky, configuration: null, lists: lists(2_000_000) },
          ],
          { mode: 'send', fanOut: true },
        ),
      'unsupported_media',
      `Account ${ids.bluesky}: media_urls[0] is an image of 2 MB; bluesky accepts images up to 977 KB`,
    );
  });

  it('a telegram draft with a photo Telegram refuses is warned, a send refused', () => {
    const tg = account('telegram');
    const tall = [{ spelling: 'media_urls' as const, contents: [sized('image/png', 800, 12_000)] }];
    const message = 'media_urls[0] is an image of 800 × 12,000 pixels; telegram accepts photos whose width and height add up to at most 10,000 pixels';
    assert.deepEqual(validateMediaContents([{ account: tg, configuration: null, lists: tall }], { mode: 'draft', fanOut: false }), [
      { account_id: tg.id, platform: 'telegram', code: 'unsupported_media', message },
    ]);
    throwsApi(() => validateMediaContents([{ account: tg, configuration: null, lists: tall }], { mode: 'send', fanOut: false }), 'unsupported_media', message);
  });

  it('a draft gets warnings; parts are named', () => {
    assert.deepEqual(
      validateMediaContents(
        [{ account: accounts.bluesky, configuration: null, lists: [{ prefix: 'posts[1].', spelling: 'media', contents: [image('image/jpeg', 2_000_000)] }] }],
        { mode: 'draft', fanOut: false },
      ),
      [{ account_id: ids.bluesky, platform: 'bluesky', code: 'unsupported_media', message: 'posts[1].media[0] is an image of 2 MB; bluesky accepts images up to 977 KB' }],
    );
  });
});
