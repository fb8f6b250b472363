import assert from 'node:assert/strict';
import { checkUpdateRequest } from '../../src/posts/rules/update-request';

const draft = { status: 'draft' as const, promoted: false };
const scheduled = { status: 'scheduled' as const, promoted: false };
const refused = (code: string, message: string) => ({ intent: null, violations: [{ code, message }] });

describe('posts rules: what an update asks for', () => {
  it('decides the intent on a draft', () => {
    assert.deepEqual(checkUpdateRequest({ text: 'a' }, draft), { intent: 'edit', violations: [] });
    assert.deepEqual(checkUpdateRequest({ schedule_at: '2026-05-01T10:00:00Z' }, draft), { intent: 'promote_schedule', violations: [] });
    assert.deepEqual(checkUpdateRequest({ schedule_at: '2026-05-01T10:00:00Z', draft: true }, draft), { intent: 'edit', violations: [] });
    assert.deepEqual(checkUpdateRequest({ publish: true }, draft), { intent: 'promote_publish', violations: [] });
    assert.deepEqual(checkUpdateRequest({ draft: true }, draft), { intent: 'edit', violations: [] });
    assert.deepEqual(checkUpdateRequest({ text: 'a' }, scheduled), { intent: 'edit', violations: [] });
  });

  it('refuses the combinations the spec refuses', () => {
    assert.deepEqual(
      checkUpdateRequest({ publish: true, schedule_at: '2026-05-01T10:00:00Z' }, draft),
      refused('bad_request', 'publish: true cannot be combined with schedule_at; send one or the other'),
    );
    assert.deepEqual(checkUpdateRequest({ draft: false }, draft), refused('bad_request', 'draft: false is not accepted; promote a draft with schedule_at or publish: true'));
    assert.deepEqual(checkUpdateRequest({ publish: true }, scheduled), refused('bad_request', 'publish applies only to drafts; this post is scheduled'));
    assert.deepEqual(checkUpdateRequest({ draft: true }, scheduled), refused('bad_request', 'draft applies only to drafts; this post is scheduled'));
    assert.deepEqual(checkUpdateRequest({}, draft), refused('bad_request', 'Nothing to change: send at least one field to update'));
    assert.deepEqual(checkUpdateRequest({ timezone: 'Europe/Berlin' }, scheduled), refused('bad_request', 'Nothing to change: timezone applies only together with schedule_at'));
    assert.deepEqual(checkUpdateRequest({ publish: false }, draft), refused('bad_request', 'publish: false is not accepted; leave publish out to edit the draft without publishing it'));
    assert.deepEqual(checkUpdateRequest({ publish: true, draft: true }, draft), refused('bad_request', 'publish: true cannot be combined with draft: true'));
    assert.deepEqual(checkUpdateRequest({ media: [], media_urls: [] }, scheduled), refused('bad_request', 'use at most one of media, media_ids and media_urls; got media and media_urls'));
  });

  it('only scheduled posts and unpromoted drafts are editable (409)', () => {
    for (const status of ['publishing', 'published', 'failed', 'deleted'] as const) {
      assert.deepEqual(
        checkUpdateRequest({ text: 'a' }, { status, promoted: false }),
        refused('post_not_editable', `The post is ${status}; only scheduled posts and drafts can be edited`),
      );
    }
    assert.deepEqual(checkUpdateRequest({ text: 'a' }, { status: 'draft', promoted: true }), refused('post_not_editable', 'The draft was already promoted; edit the post it became'));
  });

  it('a scheduled post whose earlier attempt may be live: what its next attempt looks for cannot change (409), the rest can', () => {
    const open = { ...scheduled, attemptOpen: true };
    const message =
      'An earlier attempt to publish this post did not report back, so it may already be on the platform: its text, media and configuration cannot change until its next attempt has checked (its time and first comment can)';
    for (const body of [{ text: 'a' }, { media: [] }, { media_ids: [] }, { media_urls: [] }, { configuration: {} }, { text: 'a', schedule_at: '2026-05-01T10:00:00Z' }]) {
      assert.deepEqual(checkUpdateRequest(body, open), refused('post_not_editable', message), JSON.stringify(body));
    }
    for (const body of [{ schedule_at: '2026-05-01T10:00:00Z' }, { first_comment: 'c' }]) assert.deepEqual(checkUpdateRequest(body, open), { intent: 'edit', violations: [] });
  });

  it('an empty media list is a change (it removes the media)', () => {
    assert.deepEqual(checkUpdateRequest({ media_urls: [] }, scheduled), { intent: 'edit', violations: [] });
  });
});
