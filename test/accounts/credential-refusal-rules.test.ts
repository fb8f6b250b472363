import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connectAccount } from '../comments/actions-fixtures';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { silenceSdkLogs } from '../helpers/temporal';
import { graphError, graphErrors } from '../standins/graph';
import { linkedInError } from '../standins/linkedin';
import { insertAccount } from '../posts/fixtures';
import { startPostsHarness, type PostsHarness } from '../posts/harness';

/**
 * README "Credentials", 2026-12-07 night: what a platform's call refusal looks like is data in its folder
 * (`credentialRefusal`). Graph refuses a dead token with code 190 and HTTP 400 (protocols.md sections 5 and 13): on a
 * Facebook Page, where nothing renews, a bare 190 is held as a 401 is elsewhere, and one whose subcode names the
 * account's own end (460 password changed, 463 expired, ...) loses the connection at once, as does LinkedIn's 401
 * `REVOKED_ACCESS_TOKEN` (65601): those are never held nor counted, even amid many refusals.
 */

const heldMessage = (name: string) =>
  `${name} refused this account's access, which may be a fault at ${name} rather than a lost connection, so nothing was sent; try again later, or reconnect the account if this goes on.`;

describe('A call refusal as each platform words it', function () {
  this.timeout(300_000);
  let h: PostsHarness;
  // A database of its own: a platform's refusals are counted over every account of the database.
  let database: TestDatabase;

  before(async () => {
    silenceSdkLogs('ERROR');
    database = await createTestDatabase();
    h = await startPostsHarness({ plan: 'pro', database, posts: { immediateRetryDelaysMs: [20, 20] } });
  });
  after(async () => {
    await h?.stop();
    await database?.close();
  });
  afterEach(async () => {
    h.standIns.facebook.standIn.clearFaults();
    h.standIns.linkedin.standIn.clearFaults();
    await h.db.deleteFrom('credential_refusals').execute();
  });

  const stateOf = async (id: string) => {
    const row = await h.db.selectFrom('accounts').select(['active', 'inactive_reason']).where('id', '=', id).executeTakeFirstOrThrow();
    return { active: row.active, inactive_reason: row.inactive_reason };
  };
  const refusals = (id: string) => h.db.selectFrom('credential_refusals').selectAll().where('account_id', '=', id).execute();
  const publishNow = (accountId: string, text: string) => h.api.request('POST', '/api/v1/posts', { body: { account_id: accountId, text } });
  async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const facebookPage = async () => {
    const { page } = h.standIns.facebook;
    return connectAccount(h, { platform: 'facebook', page_id: page.id, access_token: page.token });
  };
  // Every attempt of an immediate post (three) meets it.
  const refuseFeed = (answer: ReturnType<typeof graphError>) => h.standIns.facebook.standIn.inject({ method: 'POST', path: /\/feed$/ }, { kind: 'reply', response: answer }, 3);

  it('facebook: a bare 190 (HTTP 400) is held as a 401 is, the Page kept; the Page publishes once Graph answers again', async () => {
    const facebook = await facebookPage();
    refuseFeed(graphErrors.invalidToken());
    const refused = await publishNow(facebook.id, 'refused with a bare 190');
    assert.equal(refused.status, 502, refused.text);
    assert.equal(refused.body.error.message, heldMessage('Facebook'));
    assert.deepEqual(await stateOf(facebook.id), { active: true, inactive_reason: null });
    assert.equal((await refusals(facebook.id)).length, 1, 'recorded, so a second one 10 minutes on is confirmed');

    const published = await publishNow(facebook.id, 'Graph answers again');
    assert.equal(published.status, 201, published.text);
    assert.deepEqual(await refusals(facebook.id), [], 'its success ended the hold');
  });

  it('facebook: a 190 whose subcode names the account\'s own end loses the Page at once, recorded nowhere', async () => {
    const facebook = await facebookPage();
    refuseFeed(graphError({ code: 190, subcode: 460, message: 'Error validating access token: The session has been invalidated because the user changed their password.' }));
    const refused = await publishNow(facebook.id, 'refused: password changed');
    assert.equal(refused.status, 502, refused.text);
    assert.equal(refused.body.error.message, 'Facebook refused the post: Facebook no longer accepts this connection; reconnect the account.');
    await eventually('the Page lost', async () => (await stateOf(facebook.id)).inactive_reason === 'connection_lost');
    assert.deepEqual(await refusals(facebook.id), [], 'counts towards no mass event');
  });

  it('linkedin: a 401 REVOKED_ACCESS_TOKEN loses the account at once, even amid many refusals; another 401 is held', async () => {
    const li = h.standIns.linkedin;
    // Five other linkedin refusals in the hour: a mass event, which holds a bare 401 for up to 6 hours.
    const others = [];
    for (let i = 0; i < 5; i++) {
      others.push(
        await insertAccount(h.db, h.api.userId, {
          platform: 'linkedin',
          platform_account_id: `${li.personUrn()}-${randomUUID()}`,
          username: `member ${i}`,
          // No refresh token: nothing renews it, as on an app without LinkedIn's programmatic refresh.
          credentials: { access_token: li.member.token },
          settings: { authorUrn: li.personUrn() },
        }),
      );
    }
    const account = others[0]!;
    const refuse = (answer: ReturnType<typeof linkedInError>) => li.standIn.inject({ method: 'POST', path: '/rest/posts' }, { kind: 'reply', response: answer }, 3);

    refuse(linkedInError(401, 'Invalid access token', 'INVALID_ACCESS_TOKEN', 65600));
    const held = await publishNow(account.id, 'refused with an invalid token');
    assert.equal(held.status, 502, held.text);
    assert.equal(held.body.error.message, heldMessage('LinkedIn'));
    assert.deepEqual(await stateOf(account.id), { active: true, inactive_reason: null });
    await h.db
      .insertInto('credential_refusals')
      .values(others.slice(1).map((other) => ({ account_id: other.id, platform: 'linkedin' as const })))
      .execute();

    const revoked = others[1]!;
    refuse(linkedInError(401, 'The token used in the request has been revoked by the user', 'REVOKED_ACCESS_TOKEN', 65601));
    const lost = await publishNow(revoked.id, 'refused: revoked by the user');
    assert.equal(lost.status, 502, lost.text);
    assert.equal(lost.body.error.message, 'LinkedIn refused the post: LinkedIn no longer accepts this connection; reconnect the account.');
    await eventually('the account lost', async () => (await stateOf(revoked.id)).inactive_reason === 'connection_lost');
  });
});
