import assert from 'node:assert/strict';
import { resolveAccountBody, resolveAccountThread } from '../../src/posts/rules/resolve-account-body';
import { account, ids } from './fixtures';

describe('posts rules: effective body per account', () => {
  const body = {
    account_ids: [ids.x, ids.instagram, ids.facebook],
    text: 'top text',
    media_urls: ['https://e.com/a.png', 'https://e.com/b.png'],
    first_comment: 'top comment',
    configuration: { instagram: { placement: 'feed', collaborators: ['ann'] }, facebook: { link: 'https://e.com' } },
    account_configurations: {
      [ids.instagram]: { text: '', first_comment: '', configuration: { placement: 'story' }, media: [{ id: ids.media, alt: 'a cat' }] },
      [ids.facebook]: { media_ids: [], configuration: {} },
    },
  };

  it('an account with no entry takes the top-level values', () => {
    assert.deepEqual(resolveAccountBody(body, account('x')), {
      accountId: ids.x,
      text: 'top text',
      media: [{ url: 'https://e.com/a.png' }, { url: 'https://e.com/b.png' }],
      mediaSpelling: 'media_urls',
      firstComment: 'top comment',
      configuration: null,
    });
  });

  it('an entry replaces text, first comment (empty = none), the whole block and the media (never merged)', () => {
    assert.deepEqual(resolveAccountBody(body, account('instagram')), {
      accountId: ids.instagram,
      text: '',
      media: [{ id: ids.media, alt: 'a cat' }],
      mediaSpelling: 'media',
      firstComment: null,
      configuration: { placement: 'story' },
    });
  });

  it('an empty media override removes the media; an empty block returns to a plain feed post', () => {
    assert.deepEqual(resolveAccountBody(body, account('facebook')), {
      accountId: ids.facebook,
      text: 'top text',
      media: [],
      mediaSpelling: 'media_ids',
      firstComment: 'top comment',
      configuration: null,
    });
  });

  it('a per-account block may also be written keyed by the account platform', () => {
    const keyed = { account_ids: [ids.instagram], text: '', account_configurations: { [ids.instagram]: { configuration: { instagram: { placement: 'reel' } } } } };
    assert.equal(resolveAccountBody(keyed, account('instagram')).configuration?.placement, 'reel');
  });

  it('a top-level empty first comment means none', () => {
    assert.equal(resolveAccountBody({ account_id: ids.x, text: 'a', first_comment: '' }, account('x')).firstComment, null);
  });

  it('threads: parts with their own media; account entries override first comment and block', () => {
    const thread = resolveAccountThread(
      {
        account_ids: [ids.x],
        posts: [{ text: 'one', media_ids: [ids.media] }, { text: 'two' }],
        first_comment: 'c',
        account_configurations: { [ids.x]: { first_comment: '' } },
      },
      account('x'),
    );
    assert.deepEqual(thread, {
      accountId: ids.x,
      parts: [
        { text: 'one', media: [{ id: ids.media }], mediaSpelling: 'media_ids' },
        { text: 'two', media: [], mediaSpelling: null },
      ],
      firstComment: null,
      configuration: null,
    });
  });
});
