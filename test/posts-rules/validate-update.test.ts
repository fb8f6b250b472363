import assert from 'node:assert/strict';
import type { AccountBody } from '../../src/posts/rules/inputs';
import { applyUpdate, validateUpdateRequest, type UpdateContext } from '../../src/posts/rules/validate-update';
import { account, free, ids, throwsApi } from './fixtures';

const now = new Date('2026-05-01T10:00:00.000Z');
const x = account('x', { timezone: 'Europe/Berlin' });
const instagram = account('instagram');
const stored: AccountBody = { accountId: ids.x, text: 'stored', media: [], mediaSpelling: null, firstComment: 'fc', configuration: null };

function ctx(overrides: Partial<UpdateContext> = {}): UpdateContext {
  return {
    post: { status: 'scheduled', promoted: false, inThread: false },
    account: x,
    plan: free,
    now,
    current: stored,
    currentScheduledAt: new Date('2026-06-01T10:00:00Z'),
    otherScheduledTimes: [],
    ...overrides,
  };
}

describe('posts rules: validating an update', () => {
  it('replaces only what is named', () => {
    assert.deepEqual(applyUpdate(stored, { text: 'new' }, x), { ...stored, text: 'new' });
    assert.deepEqual(applyUpdate(stored, { first_comment: '' }, x), { ...stored, firstComment: null });
    assert.deepEqual(applyUpdate({ ...stored, media: [{ url: 'https://e.com/a.png' }], mediaSpelling: 'media_urls' }, { media_ids: [] }, x), { ...stored, media: [], mediaSpelling: 'media_ids' });
    const story = { ...stored, configuration: { placement: 'story' } };
    assert.deepEqual(applyUpdate(story, { configuration: {} }, instagram), { ...story, configuration: null });
    assert.deepEqual(applyUpdate(stored, { configuration: { instagram: { placement: 'reel' } } }, instagram).configuration, { placement: 'reel' });
  });

  it('an edit of a scheduled post keeps its time and runs the create rules', () => {
    const result = validateUpdateRequest({ text: 'edited' }, ctx());
    assert.equal(result.intent, 'edit');
    assert.equal(result.scheduledAt?.toISOString(), '2026-06-01T10:00:00.000Z');
    assert.equal(result.rescheduled, false);
    throwsApi(() => validateUpdateRequest({ text: 'a'.repeat(281) }, ctx()), 'bad_request', 'text is 281 characters as X counts them (links 23, emoji and CJK 2); x allows 280');
  });

  it('rescheduling reads a local time in the account timezone and checks spacing', () => {
    const result = validateUpdateRequest({ schedule_at: '2026-06-02T12:00' }, ctx());
    assert.equal(result.scheduledAt?.toISOString(), '2026-06-02T10:00:00.000Z');
    assert.equal(result.rescheduled, true);
    throwsApi(
      () => validateUpdateRequest({ schedule_at: '2026-06-02T12:00' }, ctx({ otherScheduledTimes: [new Date('2026-06-02T09:58:00Z')] })),
      'bad_request',
      'schedule_at 2026-06-02T10:00:00.000Z is within 5 minutes of another scheduled post on this account (2026-06-02T09:58:00.000Z); scheduled posts on one account must be at least 5 minutes apart',
    );
  });

  it('promoting a draft runs every create rule; on refusal nothing is returned', () => {
    const draft = ctx({ post: { status: 'draft', promoted: false, inThread: false }, currentScheduledAt: null, current: { ...stored, text: 'a'.repeat(300) } });
    throwsApi(() => validateUpdateRequest({ publish: true }, draft), 'bad_request', 'text is 300 characters as X counts them (links 23, emoji and CJK 2); x allows 280');
    throwsApi(() => validateUpdateRequest({ schedule_at: '2026-04-01T00:00:00Z', text: 'ok' }, draft), 'bad_request', 'schedule_at 2026-04-01T00:00:00.000Z is in the past; give a future time');
    const published = validateUpdateRequest({ publish: true, text: 'ok' }, draft);
    assert.deepEqual([published.intent, published.scheduledAt], ['promote_publish', null]);
  });

  it('a draft that stays a draft gets warnings, including a remembered time that has passed', () => {
    const draft = ctx({ post: { status: 'draft', promoted: false, inThread: false }, currentScheduledAt: new Date('2026-04-01T00:00:00Z') });
    const result = validateUpdateRequest({ text: 'a'.repeat(281) }, draft);
    assert.equal(result.intent, 'edit');
    assert.deepEqual(result.warnings, [
      { account_id: ids.x, platform: 'x', code: 'bad_request', message: 'text is 281 characters as X counts them (links 23, emoji and CJK 2); x allows 280' },
      { account_id: ids.x, platform: 'x', code: 'schedule_at_in_past', message: 'schedule_at 2026-04-01T00:00:00.000Z has already passed; promote the draft with a new schedule_at or publish: true' },
    ]);
    throwsApi(() => validateUpdateRequest({ text: 'a'.repeat(25_001) }, draft), 'bad_request', 'text is 25,001 characters; a draft allows 25,000');
  });

  it('refuses what the spec refuses, before any other rule', () => {
    throwsApi(() => validateUpdateRequest({ publish: true }, ctx()), 'bad_request', 'publish applies only to drafts; this post is scheduled');
    throwsApi(() => validateUpdateRequest({ text: 'a' }, ctx({ post: { status: 'published', promoted: false, inThread: false } })), 'post_not_editable', 'The post is published; only scheduled posts and drafts can be edited');
    throwsApi(() => validateUpdateRequest({ configuration: { facebook: { placement: 'story' } } }, ctx()), 'configuration_unsupported', 'configuration.facebook: no account in this request is on facebook');
  });

  it('a reel needs a video when the placement changes; a thread part cannot become a story', () => {
    const ig = ctx({ account: instagram, current: { ...stored, accountId: ids.instagram, text: '', firstComment: null, media: [{ url: 'https://e.com/a.jpg' }], mediaSpelling: 'media_urls' } });
    throwsApi(() => validateUpdateRequest({ configuration: { instagram: { placement: 'reel' } } }, ig), 'unsupported_media', 'media_urls[0] is an image; an instagram reel takes MP4 and MOV video');
    throwsApi(
      () => validateUpdateRequest({ configuration: { instagram: { placement: 'story' } } }, { ...ig, post: { status: 'scheduled', promoted: false, inThread: true } }),
      'configuration_unsupported',
      'A thread cannot be published as an instagram story; stories and reels are single posts',
    );
  });
});
