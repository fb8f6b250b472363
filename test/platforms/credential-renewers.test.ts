import assert from 'node:assert/strict';
import { createHttpClient } from '../../src/net/http';
import { createGraphRenewer } from '../../src/platforms/graph/refresh';
import { createLinkedInRenewer } from '../../src/platforms/linkedin/refresh';
import { PlatformFailure, type PlatformAdapter, type PlatformContext } from '../../src/platforms/types';
import { createXRenewer } from '../../src/platforms/x/refresh';
import { startPlatformStandIns, type PlatformStandIns } from '../helpers/platform-standins';

/**
 * Each platform's token renewal (protocols.md section 13) against its stand-in: the call it makes, what a refusal and a
 * transient fault become, and which refusals of an ordinary call count as "the token ended" (worth one renewal).
 */

const DAY_S = 86_400;
const serviceUnavailable = { kind: 'reply' as const, response: { status: 503, json: { error: 'temporarily_unavailable' } } };

async function failureOf(run: () => Promise<unknown>): Promise<PlatformFailure> {
  try {
    await run();
  } catch (err) {
    if (err instanceof PlatformFailure) return err;
    throw err;
  }
  assert.fail('expected a PlatformFailure');
}

describe('Credential renewers against the stand-ins', function () {
  this.timeout(60_000);
  let platforms: PlatformStandIns;
  const http = createHttpClient({ allowInsecure: true, timeoutMs: 5_000 });

  before(async () => {
    platforms = await startPlatformStandIns();
  });
  after(async () => {
    await platforms?.stop();
    await http.close();
  });
  afterEach(() => {
    for (const s of [platforms.x, platforms.threads, platforms.instagram, platforms.linkedin]) s.standIn.clearFaults();
  });

  const ctx = (credentials: Record<string, string>, settings: Record<string, string> = {}): PlatformContext => ({ credentials, settings });

  describe('x', () => {
    const confidential = () => createXRenewer({ http, origin: platforms.x.origin, app: { clientId: 'conformance-client', clientSecret: 'conformance-secret' } });

    it('a confidential client renews with Basic auth; the refresh token rotates and the spent one is refused', async () => {
      const user = platforms.x.addUser({ username: 'renewx' });
      const pair = platforms.x.issueTokens(user, Date.now());
      const renewed = await confidential().renew({ access_token: pair.accessToken, refresh_token: pair.refreshToken });
      assert.equal(renewed.expiresInSeconds, 7200);
      assert.notEqual(renewed.refreshToken, pair.refreshToken);
      const call = platforms.x.standIn.calls('POST', '/2/oauth2/token').at(-1)!;
      assert.deepEqual(call.form, { grant_type: 'refresh_token', refresh_token: pair.refreshToken });
      assert.equal(call.headers.authorization, `Basic ${Buffer.from('conformance-client:conformance-secret').toString('base64')}`);
      const me = await platforms.adapters.x.verify(ctx({ access_token: renewed.accessToken }));
      assert.equal(me.platformAccountId, user.id, 'the new access token works');

      const spent = await failureOf(() => confidential().renew({ refresh_token: pair.refreshToken }));
      assert.equal(spent.kind, 'reauthorize');
      assert.equal(spent.clientMessage, "X refused to renew this account's access; reconnect the account.");
      assert.deepEqual(platforms.x.oauth.renewals.at(-1), { refreshToken: pair.refreshToken, outcome: 'spent' });
    });

    it('a public client sends client_id in the form; a wrong client is refused; a 503 is transient and spends nothing', async () => {
      const user = platforms.x.addUser({ username: 'publicx' });
      const pair = platforms.x.issueTokens(user, Date.now());
      platforms.x.oauth.app.clientSecret = null;
      try {
        const publicClient = createXRenewer({ http, origin: platforms.x.origin, app: { clientId: 'conformance-client', clientSecret: null } });
        platforms.x.standIn.inject({ path: '/2/oauth2/token' }, serviceUnavailable);
        assert.equal((await failureOf(() => publicClient.renew({ refresh_token: pair.refreshToken }))).kind, 'retryable');
        const renewed = await publicClient.renew({ refresh_token: pair.refreshToken });
        assert.equal(platforms.x.standIn.calls('POST', '/2/oauth2/token').at(-1)!.form?.client_id, 'conformance-client');
        const wrong = createXRenewer({ http, origin: platforms.x.origin, app: { clientId: 'someone-else', clientSecret: null } });
        assert.equal((await failureOf(() => wrong.renew({ refresh_token: renewed.refreshToken! }))).kind, 'reauthorize');
      } finally {
        platforms.x.oauth.app.clientSecret = 'conformance-secret';
      }
    });

    it('an ended token is a 401 the adapter classes reauthorize, which the renewer recognises; OAuth 1.0a accounts are not renewed', async () => {
      const user = platforms.x.addUser({ username: 'endedx' });
      const pair = platforms.x.issueTokens(user, Date.now());
      platforms.x.expireAccessToken(pair.accessToken);
      const failure = await failureOf(() => platforms.adapters.x.verify(ctx({ access_token: pair.accessToken })));
      assert.equal(failure.kind, 'reauthorize');
      assert.equal(confidential().isEndedTokenAnswer(failure), true);
      assert.equal(confidential().applies({ via: null, own_credentials: true }), false);
      assert.equal(createXRenewer({ http, app: null }).configured, false);
    });
  });

  describe('threads and instagram: the token renews itself', () => {
    const threadsRenewer = () => createGraphRenewer({ http, platform: 'threads', apiUrl: platforms.threads.origin });
    const instagramRenewer = () => createGraphRenewer({ http, platform: 'instagram', apiUrl: platforms.instagram.origin });

    it('threads: a token older than 24 h gets a new 60-day one, on the unversioned origin; a younger one comes back as it is', async () => {
      const now = Date.now();
      const old = platforms.threads.tokens.issue(now, 60 * DAY_S, now - 30 * DAY_S * 1000);
      const renewed = await threadsRenewer().renew({ access_token: old });
      assert.notEqual(renewed.accessToken, old);
      assert.equal(renewed.expiresInSeconds, 60 * DAY_S);
      const call = platforms.threads.standIn.calls('GET').at(-1)!;
      assert.deepEqual({ path: call.path, query: call.query }, { path: '/refresh_access_token', query: { grant_type: 'th_refresh_token', access_token: old } });
      const me = await platforms.adapters.threads.verify(ctx({ access_token: renewed.accessToken }));
      assert.equal(me.platformAccountId, platforms.threads.user.id);

      const young = platforms.threads.tokens.issue(now);
      const same = await threadsRenewer().renew({ access_token: young });
      assert.equal(same.accessToken, young);
      assert.ok(same.expiresInSeconds > 59 * DAY_S && same.expiresInSeconds <= 60 * DAY_S);
    });

    it('threads: an ended token is 190/463 on any call (recognised as ended) and cannot be renewed', async () => {
      const token = platforms.threads.tokens.issue(Date.now(), 60 * DAY_S, Date.now() - 30 * DAY_S * 1000);
      platforms.threads.tokens.expire(token);
      const failure = await failureOf(() => platforms.adapters.threads.verify(ctx({ access_token: token })));
      assert.equal(failure.kind, 'reauthorize');
      assert.equal(threadsRenewer().isEndedTokenAnswer(failure), true);
      const refused = await failureOf(() => threadsRenewer().renew({ access_token: token }));
      assert.equal(refused.kind, 'reauthorize');
      assert.equal(refused.clientMessage, "Threads refused to renew this account's access; reconnect the account.");
    });

    it('instagram (Instagram Login) renews with ig_refresh_token; instagram via facebook is not renewed', async () => {
      const now = Date.now();
      const old = platforms.instagram.tokens.issue(now, 60 * DAY_S, now - 40 * DAY_S * 1000);
      const renewed = await instagramRenewer().renew({ access_token: old });
      assert.notEqual(renewed.accessToken, old);
      const call = platforms.instagram.standIn.calls('GET', '/refresh_access_token').at(-1)!;
      assert.equal(call.query.grant_type, 'ig_refresh_token');
      assert.equal(instagramRenewer().applies({ via: 'facebook', own_credentials: false }), false);
      assert.equal(instagramRenewer().applies({ via: 'instagram', own_credentials: false }), true);
      platforms.instagram.standIn.inject({ path: '/refresh_access_token' }, serviceUnavailable);
      assert.equal((await failureOf(() => instagramRenewer().renew({ access_token: renewed.accessToken }))).kind, 'retryable');
    });
  });

  describe('linkedin', () => {
    const renewer = (secret = 'li-secret') => createLinkedInRenewer({ http, app: { clientId: 'li-client', clientSecret: secret, oauthUrl: platforms.linkedin.origin } });

    it('renews with the refresh token and the app id and secret; the same refresh token comes back; refusals need a reconnect', async () => {
      platforms.linkedin.oauth.refreshTokens.add('li-refresh-ok');
      const renewed = await renewer().renew({ access_token: 'old', refresh_token: 'li-refresh-ok' });
      assert.equal(renewed.expiresInSeconds, 60 * DAY_S);
      assert.equal(renewed.refreshToken, 'li-refresh-ok');
      const call = platforms.linkedin.standIn.calls('POST', '/oauth/v2/accessToken').at(-1)!;
      assert.deepEqual(call.form, { grant_type: 'refresh_token', refresh_token: 'li-refresh-ok', client_id: 'li-client', client_secret: 'li-secret' });
      const adapter: PlatformAdapter = platforms.adapters.linkedin;
      assert.equal((await adapter.verify(ctx({ access_token: renewed.accessToken }))).username, platforms.linkedin.member.name);

      assert.equal((await failureOf(() => renewer().renew({ refresh_token: 'li-refresh-revoked' }))).kind, 'reauthorize');
      assert.equal((await failureOf(() => renewer('wrong').renew({ refresh_token: 'li-refresh-ok' }))).kind, 'reauthorize');
      platforms.linkedin.standIn.inject({ path: '/oauth/v2/accessToken' }, serviceUnavailable);
      assert.equal((await failureOf(() => renewer().renew({ refresh_token: 'li-refresh-ok' }))).kind, 'retryable');
    });

    it('an ended access token is 401 EXPIRED_ACCESS_TOKEN, recognised as ended', async () => {
      const token = platforms.linkedin.tokens.issue(Date.now());
      platforms.linkedin.tokens.expire(token);
      const failure = await failureOf(() => platforms.adapters.linkedin.verify(ctx({ access_token: token })));
      assert.equal(failure.kind, 'reauthorize');
      assert.equal(renewer().isEndedTokenAnswer(failure), true);
    });
  });
});
