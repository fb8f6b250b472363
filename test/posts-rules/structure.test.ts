import assert from 'node:assert/strict';
import { checkAccountSelection, checkCreatePostStructure, checkCreateThreadStructure, checkMediaSpellings } from '../../src/posts/rules/structure';
import { ids } from './fixtures';

const many = (n: number) => Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);

describe('posts rules: request structure', () => {
  it('needs exactly one of account_id and account_ids', () => {
    assert.deepEqual(checkAccountSelection({}), [{ code: 'bad_request', message: 'account_id or account_ids is required' }]);
    assert.deepEqual(checkAccountSelection({ account_id: ids.x, account_ids: [ids.bluesky] }), [
      { code: 'bad_request', message: 'Send either account_id or account_ids, not both' },
    ]);
    assert.deepEqual(checkAccountSelection({ account_id: ids.x }), []);
  });

  it('takes 1 to 25 account ids', () => {
    assert.deepEqual(checkAccountSelection({ account_ids: [] }), [{ code: 'bad_request', message: 'account_ids needs at least 1 account id' }]);
    assert.deepEqual(checkAccountSelection({ account_ids: many(1) }), []);
    assert.deepEqual(checkAccountSelection({ account_ids: many(25) }), []);
    assert.deepEqual(checkAccountSelection({ account_ids: many(26) }), [
      { code: 'bad_request', message: 'account_ids accepts at most 25 account ids; got 26' },
    ]);
  });

  it('refuses duplicate ids, whatever their case', () => {
    assert.deepEqual(checkAccountSelection({ account_ids: [ids.x, ids.bluesky, ids.x.toUpperCase()] }), [
      { code: 'bad_request', message: `account_ids names ${ids.x.toUpperCase()} more than once` },
    ]);
  });

  it('account_configurations only with account_ids, keys within them', () => {
    assert.deepEqual(checkAccountSelection({ account_id: ids.x, account_configurations: {} }), [
      { code: 'bad_request', message: 'account_configurations is accepted only with account_ids' },
    ]);
    assert.deepEqual(checkAccountSelection({ account_ids: [ids.x], account_configurations: { [ids.bluesky]: {} } }), [
      { code: 'bad_request', message: `account_configurations key ${ids.bluesky} is not in account_ids` },
    ]);
    assert.deepEqual(checkAccountSelection({ account_ids: [ids.x], account_configurations: { [ids.x]: {} } }), []);
  });

  it('at most one media spelling per level', () => {
    assert.deepEqual(checkMediaSpellings({ media: [], media_urls: [] }), [
      { code: 'bad_request', message: 'use at most one of media, media_ids and media_urls; got media and media_urls' },
    ]);
    assert.deepEqual(checkMediaSpellings({ media_ids: [], account_configurations: { [ids.x]: { media: [], media_ids: [], media_urls: [] } } }), [
      { code: 'bad_request', message: `account_configurations.${ids.x}: use at most one of media, media_ids and media_urls; got media, media_ids and media_urls` },
    ]);
    assert.deepEqual(checkMediaSpellings({ posts: [{ media: [] }, { media_ids: [], media_urls: [] }] }), [
      { code: 'bad_request', message: 'posts[1]: use at most one of media, media_ids and media_urls; got media_ids and media_urls' },
    ]);
    // One spelling at the top and another in an override is allowed: the override replaces.
    assert.deepEqual(checkMediaSpellings({ media_urls: [], account_configurations: { [ids.x]: { media_ids: [] } } }), []);
  });

  it('text is required unless a draft; thread parts name their index', () => {
    assert.deepEqual(checkCreatePostStructure({ account_id: ids.x }), [{ code: 'bad_request', message: 'text is required' }]);
    assert.deepEqual(checkCreatePostStructure({ account_id: ids.x, draft: true }), []);
    assert.deepEqual(checkCreatePostStructure({ account_id: ids.x, text: '' }), []);
    assert.deepEqual(checkCreateThreadStructure({ account_id: ids.x, posts: [{ text: 'a' }, {}] }), [
      { code: 'bad_request', message: 'posts[1].text is required' },
    ]);
    assert.deepEqual(checkCreateThreadStructure({ account_id: ids.x, posts: [{}], draft: true }), []);
  });
});
