import assert from 'node:assert/strict';
import { createHttpClient } from '../../src/net/http';
import { createGraphRenewer } from '../../src/platforms/graph/refresh';
import { createLinkedInRenewer } from '../../src/platforms/linkedin/refresh';
import { RenewalSetupFailure } from '../../src/platforms/renewal/token-endpoint';
import { PlatformFailure, type PlatformAdapter, type PlatformContext } from '../../src/platforms/types';
import { createXRenewer } from '../../src/platforms/x/refresh';
import { startPlatformStandIns, type PlatformStandIns } from '../helpers/platform-standins';
import { graphError, graphErrors } from '../standins/graph';

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

    it('a public client sends client_id in the form; a wrong client is Herald\'s configuration, not a dead token; a 503 is transient and spends nothing', async () => {
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
        const refused = await failureOf(() => wrong.renew({ refresh_token: renewed.refreshToken! }));
        assert.ok(refused instanceof RenewalSetupFailure, `${refused.kind}: ${refused.message}`);
        assert.equal(refused.kind, 'retryable', 'retried like a transient fault: the account keeps its credential');
        assert.equal(refused.fix, 'check HERALD_X_CLIENT_ID and HERALD_X_CLIENT_SECRET');
        assert.deepEqual(platforms.x.oauth.renewals.at(-1), { refreshToken: renewed.refreshToken, outcome: 'bad_client' });
        assert.equal(platforms.x.oauth.refresh.get(renewed.refreshToken!)?.spent, false, 'the refresh token is not spent');
      } finally {
        platforms.x.oauth.app.clientSecret = 'conformance-secret';
      }
    });

    it('an answer without an access_token is transient, and what is kept of it for the log names no token', async () => {
      const user = platforms.x.addUser({ username: 'oddanswer' });
      const pair = platforms.x.issueTokens(user, Date.now());
      platforms.x.standIn.inject({ path: '/2/oauth2/token' }, { kind: 'reply', response: { status: 200, json: { token_type: 'bearer', refresh_token: 'rotated-secret-value', scope: 'tweet.write' } } });
      const odd = await failureOf(() => confidential().renew({ refresh_token: pair.refreshToken }));
      assert.equal(odd.kind, 'retryable');
      assert.equal(odd.detail?.body, JSON.stringify({ token_type: '[redacted]', refresh_token: '[redacted]', scope: 'tweet.write' }));
    });

    it('RFC 6749 error codes as X answers them: invalid_grant and invalid_request are a dead refresh token, invalid_client is Herald\'s app', async () => {
      const user = platforms.x.addUser({ username: 'codesx' });
      const pair = platforms.x.issueTokens(user, Date.now());
      const oauthError = (status: number, error: string, description: string) => ({ kind: 'reply' as const, response: { status, json: { error, error_description: description } } });

      platforms.x.standIn.inject({ path: '/2/oauth2/token' }, oauthError(400, 'invalid_grant', 'Value passed for the token was invalid.'));
      assert.equal((await failureOf(() => confidential().renew({ refresh_token: pair.refreshToken }))).kind, 'reauthorize');
      platforms.x.standIn.inject({ path: '/2/oauth2/token' }, oauthError(400, 'invalid_client', 'Client authentication failed'));
      const badClient = await failureOf(() => confidential().renew({ refresh_token: pair.refreshToken }));
      assert.ok(badClient instanceof RenewalSetupFailure && badClient.kind === 'retryable', `${badClient.kind}: ${badClient.message}`);
      platforms.x.standIn.inject({ path: '/2/oauth2/token' }, oauthError(401, 'unauthorized_client', 'Missing valid authorization header'));
      assert.ok((await failureOf(() => confidential().renew({ refresh_token: pair.refreshToken }))) instanceof RenewalSetupFailure);
      platforms.x.standIn.inject({ path: '/2/oauth2/token' }, oauthError(400, 'unsupported_grant_type', 'Value passed for the grant type was invalid.'));
      const unsupported = await failureOf(() => confidential().renew({ refresh_token: pair.refreshToken }));
      assert.ok(unsupported instanceof RenewalSetupFailure, 'a request Herald got wrong is not the user\'s dead token');
      platforms.x.standIn.inject({ path: '/2/oauth2/token' }, { kind: 'reply', response: { status: 429, json: { title: 'Too Many Requests' } } });
      assert.equal((await failureOf(() => confidential().renew({ refresh_token: pair.refreshToken }))).kind, 'rate_limited');
      platforms.x.standIn.clearFaults();
      await confidential().renew({ refresh_token: pair.refreshToken });
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
      assert.equal(refused.clientMessage, "Threads refused to renew this account's access: Threads no longer accepts this connection; reconnect the account.");
      // 463 names the account's own end: the mass-loss guard never holds it back. An unknown token (190 alone) may not.
      assert.equal(threadsRenewer().isAccountsOwnRefusal(refused), true);
      const unknown = await failureOf(() => threadsRenewer().renew({ access_token: 'never-issued' }));
      assert.equal(unknown.kind, 'reauthorize');
      assert.equal(threadsRenewer().isAccountsOwnRefusal(unknown), false);
    });

    it('threads and instagram: Graph throttling and transient codes come with HTTP 400 and are transient; only 190 is a dead token', async () => {
      const token = platforms.threads.tokens.issue(Date.now(), 60 * DAY_S, Date.now() - 30 * DAY_S * 1000);
      for (const code of [4, 17, 32, 613] as const) {
        platforms.threads.standIn.inject({ path: '/refresh_access_token' }, { kind: 'reply', response: graphErrors.throttled(code) });
        const throttled = await failureOf(() => threadsRenewer().renew({ access_token: token }));
        assert.deepEqual([throttled.kind, throttled.detail?.status], ['rate_limited', 400], `code ${code}`);
      }
      for (const code of [1, 2]) {
        platforms.threads.standIn.inject({ path: '/refresh_access_token' }, { kind: 'reply', response: graphError({ code, message: 'An unexpected error has occurred. Please retry your request later.' }) });
        assert.equal((await failureOf(() => threadsRenewer().renew({ access_token: token }))).kind, 'retryable', `code ${code}`);
      }
      platforms.threads.standIn.inject({ path: '/refresh_access_token' }, { kind: 'reply', response: graphErrors.invalidParameter() });
      assert.ok((await failureOf(() => threadsRenewer().renew({ access_token: token }))) instanceof RenewalSetupFailure, 'a parameter Herald got wrong is not a dead token');
      platforms.threads.standIn.clearFaults();
      assert.notEqual((await threadsRenewer().renew({ access_token: token })).accessToken, token, 'nothing was spent meanwhile');

      const igToken = platforms.instagram.tokens.issue(Date.now(), 60 * DAY_S, Date.now() - 30 * DAY_S * 1000);
      platforms.instagram.standIn.inject({ path: '/refresh_access_token' }, { kind: 'reply', response: graphErrors.throttled(613) });
      assert.equal((await failureOf(() => instagramRenewer().renew({ access_token: igToken }))).kind, 'rate_limited');
      platforms.instagram.tokens.expire(igToken);
      platforms.instagram.standIn.clearFaults();
      assert.equal((await failureOf(() => instagramRenewer().renew({ access_token: igToken }))).kind, 'reauthorize', '190/463');
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

    it('renews with the refresh token and the app id and secret; the same refresh token comes back; a refused token needs a reconnect, a refused app does not', async () => {
      platforms.linkedin.oauth.refreshTokens.add('li-refresh-ok');
      const renewed = await renewer().renew({ access_token: 'old', refresh_token: 'li-refresh-ok' });
      assert.equal(renewed.expiresInSeconds, 60 * DAY_S);
      assert.equal(renewed.refreshToken, 'li-refresh-ok');
      const call = platforms.linkedin.standIn.calls('POST', '/oauth/v2/accessToken').at(-1)!;
      assert.deepEqual(call.form, { grant_type: 'refresh_token', refresh_token: 'li-refresh-ok', client_id: 'li-client', client_secret: 'li-secret' });
      const adapter: PlatformAdapter = platforms.adapters.linkedin;
      assert.equal((await adapter.verify(ctx({ access_token: renewed.accessToken }))).username, platforms.linkedin.member.name);

      assert.equal((await failureOf(() => renewer().renew({ refresh_token: 'li-refresh-revoked' }))).kind, 'reauthorize');
      const wrongSecret = await failureOf(() => renewer('wrong').renew({ refresh_token: 'li-refresh-ok' }));
      assert.ok(wrongSecret instanceof RenewalSetupFailure && wrongSecret.kind === 'retryable', `${wrongSecret.kind}: ${wrongSecret.message}`);
      assert.equal(wrongSecret.fix, 'check HERALD_LINKEDIN_CLIENT_ID and HERALD_LINKEDIN_CLIENT_SECRET');
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
