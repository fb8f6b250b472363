import assert from 'node:assert/strict';
import { validatePostRequest } from '../../src/posts/rules/validate-post';
import { account, free, ids, paid, throwsApi } from './fixtures';

const now = new Date('2026-05-01T10:00:00.000Z');
const x = account('x');
const bluesky = account('bluesky');
const telegram = account('telegram');
const instagram = account('instagram');

describe('posts rules: validating a create request', () => {
  it('a single-account send: what to publish, no warnings', () => {
    const result = validatePostRequest({ account_id: ids.x, text: 'hello' }, { accounts: [x], plan: free, now });
    assert.deepEqual(result, {
      fanOut: false,
      mode: 'send',
      accounts: [
        {
          account: x,
          body: { accountId: ids.x, text: 'hello', media: [], mediaSpelling: null, firstComment: null, configuration: null },
          scheduledAt: null,
          xLinkBilled: [],
        },
      ],
      warnings: [],
    });
  });

  it('a single-account refusal carries no prefix', () => {
    throwsApi(
      () => validatePostRequest({ account_id: ids.x, text: 'a'.repeat(281) }, { accounts: [x], plan: free, now }),
      'bad_request',
      'text is 281 characters as X counts them (links 23, emoji and CJK 2); x allows 280',
    );
  });

  it('fan-out: every account is checked; the first failure refuses the whole request, prefixed', () => {
    throwsApi(
      () => validatePostRequest({ account_ids: [ids.x, ids.bluesky], text: 'a'.repeat(290) }, { accounts: [x, bluesky], plan: free, now }),
      'bad_request',
      `Account ${ids.x}: text is 290 characters as X counts them (links 23, emoji and CJK 2); x allows 280`,
    );
    throwsApi(
      () =>
        validatePostRequest(
          { account_ids: [ids.x, ids.bluesky], text: 'hello', first_comment: 'first!' },
          { accounts: [x, bluesky], plan: free, now },
        ),
      'first_comment_unsupported',
      `Account ${ids.bluesky}: first_comment is not supported on bluesky; only x, threads, instagram and facebook accept one`,
    );
  });

  it('fan-out: an override makes an account pass (empty first comment = none)', () => {
    const result = validatePostRequest(
      { account_ids: [ids.x, ids.bluesky], text: 'hello', first_comment: 'first!', account_configurations: { [ids.bluesky]: { first_comment: '' } } },
      { accounts: [x, bluesky], plan: free, now },
    );
    assert.equal(result.fanOut, true);
    assert.deepEqual(result.accounts.map((a) => a.body.firstComment), ['first!', null]);
  });

  it('fan-out selects the fan-out shape even for one account, and prefixes its errors', () => {
    throwsApi(
      () => validatePostRequest({ account_ids: [ids.telegram], text: 'a'.repeat(1_025), media_urls: ['https://e.com/a.jpg'] }, { accounts: [telegram], plan: free, now }),
      'bad_request',
      `Account ${ids.telegram}: text is 1,025 characters; telegram allows, when the post carries media, 1,024`,
    );
  });

  it('structure problems refuse before any account, without prefix', () => {
    throwsApi(
      () => validatePostRequest({ account_ids: [ids.x, ids.x], text: 'a' }, { accounts: [x], plan: free, now }),
      'bad_request',
      `account_ids names ${ids.x} more than once`,
    );
    throwsApi(
      () => validatePostRequest({ account_ids: [ids.x], text: 'a', configuration: { bluesky: {} } }, { accounts: [x], plan: free, now }),
      'configuration_unsupported',
      'configuration.bluesky: bluesky takes no publishing options; only instagram and facebook do',
    );
  });

  it('instagram without media is refused', () => {
    throwsApi(() => validatePostRequest({ account_id: ids.instagram, text: 'hi' }, { accounts: [instagram], plan: free, now }), 'bad_request', 'instagram requires media; text-only posts are refused');
  });

  it('an empty text with no media is refused', () => {
    throwsApi(() => validatePostRequest({ account_id: ids.x, text: '  ' }, { accounts: [x], plan: free, now }), 'bad_request', 'text is empty and the post has no media; there is nothing to publish');
  });

  it('x link posts: 402 on Free, billed on paid plans, exempt with own credentials', () => {
    throwsApi(
      () => validatePostRequest({ account_id: ids.x, text: 'see example.com' }, { accounts: [x], plan: free, now }),
      'x_link_posts_require_paid_plan',
      'text contains a link (example.com); x posts, replies and first comments with links need a paid plan or an account connected with your own X API credentials',
    );
    const billed = validatePostRequest({ account_id: ids.x, text: 'see example.com', first_comment: 'https://e.com/x' }, { accounts: [x], plan: paid, now });
    assert.deepEqual(billed.accounts[0].xLinkBilled, ['text', 'first_comment']);
    const own = validatePostRequest({ account_id: ids.x, text: 'see example.com' }, { accounts: [account('x', { own_credentials: true })], plan: free, now });
    assert.deepEqual(own.accounts[0].xLinkBilled, []);
  });

  it('schedule_at: per account timezone, future, spacing', () => {
    const berlin = account('x', { timezone: 'Europe/Berlin' });
    const ny = account('bluesky', { timezone: 'America/New_York' });
    const result = validatePostRequest({ account_ids: [ids.x, ids.bluesky], text: 'hi', schedule_at: '2026-06-01T09:00' }, { accounts: [berlin, ny], plan: free, now });
    assert.deepEqual(
      result.accounts.map((a) => a.scheduledAt?.toISOString()),
      ['2026-06-01T07:00:00.000Z', '2026-06-01T13:00:00.000Z'],
    );
    throwsApi(
      () => validatePostRequest({ account_ids: [ids.x, ids.bluesky], text: 'hi', schedule_at: '2026-06-01T09:00' }, { accounts: [berlin, bluesky], plan: free, now }),
      'bad_request',
      `Account ${ids.bluesky}: schedule_at 2026-06-01T09:00 has no offset and no timezone applies; add Z or an offset, send timezone, or set the account's timezone`,
    );
    throwsApi(
      () => validatePostRequest({ account_id: ids.x, text: 'hi', schedule_at: '2026-04-01T09:00:00Z' }, { accounts: [x], plan: free, now }),
      'bad_request',
      'schedule_at 2026-04-01T09:00:00.000Z is in the past; give a future time',
    );
    throwsApi(
      () =>
        validatePostRequest(
          { account_id: ids.x, text: 'hi', schedule_at: '2026-06-01T09:00:00Z' },
          { accounts: [x], plan: free, now, scheduledTimes: { [ids.x]: [new Date('2026-06-01T09:03:00Z')] } },
        ),
      'bad_request',
      'schedule_at 2026-06-01T09:00:00.000Z is within 5 minutes of another scheduled post on this account (2026-06-01T09:03:00.000Z); scheduled posts on one account must be at least 5 minutes apart',
    );
    throwsApi(
      () => validatePostRequest({ account_id: ids.x, text: 'hi', timezone: 'UTC+1' }, { accounts: [x], plan: free, now }),
      'bad_request',
      'timezone must be an IANA time zone name such as Europe/Berlin; a fixed offset (UTC+1) is not accepted',
    );
  });
});

describe('posts rules: drafts', () => {
  it('saves with warnings carrying the code and message a send would give (refusals first, then notices)', () => {
    const result = validatePostRequest(
      {
        account_ids: [ids.x, ids.bluesky, ids.instagram],
        draft: true,
        text: `${'a'.repeat(290)} example.com`,
        first_comment: 'more',
        schedule_at: '2026-04-01T09:00:00Z',
      },
      { accounts: [x, bluesky, instagram], plan: free, now },
    );
    assert.equal(result.mode, 'draft');
    assert.deepEqual(result.warnings, [
      { account_id: ids.x, platform: 'x', code: 'bad_request', message: 'text is 314 characters as X counts them (links 23, emoji and CJK 2); x allows 280' },
      { account_id: ids.x, platform: 'x', code: 'x_link_posts_require_paid_plan', message: 'text contains a link (example.com); x posts, replies and first comments with links need a paid plan or an account connected with your own X API credentials' },
      { account_id: ids.x, platform: 'x', code: 'schedule_at_in_past', message: 'schedule_at 2026-04-01T09:00:00.000Z has already passed; promote the draft with a new schedule_at or publish: true' },
      { account_id: ids.bluesky, platform: 'bluesky', code: 'bad_request', message: 'text is 302 characters; bluesky allows 300' },
      { account_id: ids.bluesky, platform: 'bluesky', code: 'first_comment_unsupported', message: 'first_comment is not supported on bluesky; only x, threads, instagram and facebook accept one' },
      { account_id: ids.bluesky, platform: 'bluesky', code: 'schedule_at_in_past', message: 'schedule_at 2026-04-01T09:00:00.000Z has already passed; promote the draft with a new schedule_at or publish: true' },
      { account_id: ids.instagram, platform: 'instagram', code: 'bad_request', message: 'instagram requires media; text-only posts are refused' },
      { account_id: ids.instagram, platform: 'instagram', code: 'schedule_at_in_past', message: 'schedule_at 2026-04-01T09:00:00.000Z has already passed; promote the draft with a new schedule_at or publish: true' },
    ]);
    assert.deepEqual(result.accounts.map((a) => a.scheduledAt?.toISOString()), Array(3).fill('2026-04-01T09:00:00.000Z'));
  });

  it('a clean draft has an empty warnings array; text may be absent', () => {
    assert.deepEqual(validatePostRequest({ account_id: ids.x, draft: true, text: 'fine' }, { accounts: [x], plan: free, now }).warnings, []);
    assert.deepEqual(validatePostRequest({ account_id: ids.x, draft: true }, { accounts: [x], plan: free, now }).warnings, [
      { account_id: ids.x, platform: 'x', code: 'bad_request', message: 'text is empty and the post has no media; there is nothing to publish' },
    ]);
  });

  it('paid plans: a link is a billed notice', () => {
    assert.deepEqual(validatePostRequest({ account_id: ids.x, draft: true, text: 'https://e.com' }, { accounts: [x], plan: paid, now }).warnings, [
      { account_id: ids.x, platform: 'x', code: 'x_link_post_billed', message: 'text contains a link (https://e.com); publishing it on x is billed $0.25 on top of the monthly quota' },
    ]);
  });

  it('still refuses text over 25,000, too many ids, duplicates and two media spellings', () => {
    throwsApi(() => validatePostRequest({ account_id: ids.x, draft: true, text: 'a'.repeat(25_001) }, { accounts: [x], plan: free, now }), 'bad_request', 'text is 25,001 characters; a draft allows 25,000');
    throwsApi(
      () => validatePostRequest({ account_ids: [ids.x], draft: true, text: 'a', account_configurations: { [ids.x]: { text: 'b'.repeat(25_001) } } }, { accounts: [x], plan: free, now }),
      'bad_request',
      `account_configurations.${ids.x}.text is 25,001 characters; a draft allows 25,000`,
    );
    throwsApi(() => validatePostRequest({ account_id: ids.x, draft: true, media: [], media_ids: [] }, { accounts: [x], plan: free, now }), 'bad_request', 'use at most one of media, media_ids and media_urls; got media and media_ids');
    assert.equal(validatePostRequest({ account_id: ids.x, draft: true, text: 'a'.repeat(25_000) }, { accounts: [x], plan: free, now }).warnings[0].code, 'bad_request');
  });

  it('a configuration key for an unused platform is a warning on every account of a draft', () => {
    assert.deepEqual(validatePostRequest({ account_id: ids.x, draft: true, text: 'a', configuration: { facebook: {} } }, { accounts: [x], plan: free, now }).warnings, [
      { account_id: ids.x, platform: 'x', code: 'configuration_unsupported', message: 'configuration.facebook: no account in this request is on facebook' },
    ]);
  });
});
