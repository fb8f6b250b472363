import assert from 'node:assert/strict';
import type { CredentialKeeper } from '../../src/accounts/credential-workflow-client';
import { openCredentials } from '../../src/accounts';
import { ConfigError, parseConfig } from '../../src/config';
import { startApi, testConfig, type TestApi } from '../helpers/api';
import { testDatabase } from '../helpers/db';
import { startPlatformStandIns, type PlatformStandIns } from '../helpers/platform-standins';
import { testSealedBox } from '../posts/fixtures';

/**
 * decisions.md "Keeping credentials alive" over HTTP: `credential_expires_at` on the account object, the warning when
 * a credential cannot be renewed, LinkedIn's `refresh_token`, a reconnect that never drops a stored refresh token, and
 * the app credentials' configuration. The credential workflow itself is covered by credential-renewal.test.ts; here
 * the keeper only records which accounts it was asked to keep alive.
 */

const appCredentials = {
  HERALD_X_CLIENT_ID: 'conformance-client',
  HERALD_X_CLIENT_SECRET: 'conformance-secret',
  HERALD_LINKEDIN_CLIENT_ID: 'li-client',
  HERALD_LINKEDIN_CLIENT_SECRET: 'li-secret',
};

describe('Accounts: credentials that end', function () {
  this.timeout(60_000);
  let platforms: PlatformStandIns;
  let withApps: TestApi;
  let withoutApps: TestApi;
  const kept: string[] = [];
  const keeper: CredentialKeeper = { credentialStored: async (accountId) => void kept.push(accountId) };

  before(async () => {
    platforms = await startPlatformStandIns();
    withApps = await startApi({ plan: 'pro', deps: { config: testConfig(appCredentials), adapters: platforms.adapters, credentialKeeper: keeper } });
    withoutApps = await startApi({ plan: 'pro', deps: { adapters: platforms.adapters, credentialKeeper: keeper } });
  });
  after(async () => {
    await withApps?.close();
    await withoutApps?.close();
    await platforms?.stop();
  });
  beforeEach(() => void kept.splice(0));

  const endsInAbout = (iso: string, seconds: number) => {
    const endsIn = Date.parse(iso) - Date.now();
    return endsIn > seconds * 1000 - 120_000 && endsIn <= seconds * 1000;
  };
  const storedCredentials = async (accountId: string) => {
    const { db } = await testDatabase();
    const row = await db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
    return openCredentials(testSealedBox, row.user_id, row.credentials_sealed!);
  };

  it('x with a refresh_token and X app credentials: renewable, no warning, its workflow asked for, credential_expires_at shown', async () => {
    platforms.x.addUser({ username: 'renewable', bearerToken: 'x-renewable-1' });
    const res = await withApps.request('POST', '/api/v1/accounts', { body: { access_token: 'x-renewable-1', refresh_token: 'x-refresh-1' } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.meta.warnings, []);
    assert.ok(endsInAbout(res.body.data.credential_expires_at, 2 * 3600), res.body.data.credential_expires_at);
    assert.deepEqual(kept, [res.body.data.id]);
    const got = await withApps.request('GET', `/api/v1/accounts/${res.body.data.id}`);
    assert.equal(got.body.data.credential_expires_at, res.body.data.credential_expires_at);
    const listed = await withApps.request('GET', '/api/v1/accounts');
    assert.equal(listed.body.data.find((a: { id: string }) => a.id === res.body.data.id).credential_expires_at, res.body.data.credential_expires_at);
  });

  it('x with a refresh_token but no X app credentials: connected, and told it will need reconnecting when its token ends', async () => {
    platforms.x.addUser({ username: 'noapp', bearerToken: 'x-noapp-1' });
    const res = await withoutApps.request('POST', '/api/v1/accounts', { body: { access_token: 'x-noapp-1', refresh_token: 'x-noapp-refresh' } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.meta.warnings, [
      {
        account_id: res.body.data.id,
        platform: 'x',
        code: 'credential_not_renewable',
        message:
          'This Herald has no X app credentials (HERALD_X_CLIENT_ID and HERALD_X_CLIENT_SECRET) to renew the token with, so this account will need reconnecting when its token ends (X access tokens last at most 2 hours).',
      },
    ]);
    assert.ok(endsInAbout(res.body.data.credential_expires_at, 2 * 3600));
    assert.deepEqual(kept, [res.body.data.id], 'its workflow is asked for: it loses the connection when the token ends');
    assert.equal((await storedCredentials(res.body.data.id)).refresh_token, 'x-noapp-refresh', 'kept for when app credentials are configured');
  });

  it('credentials that do not end: x own API keys, facebook, mastodon, telegram, instagram via facebook have credential_expires_at null', async () => {
    const oauth1 = { consumerKey: 'ck-cred', consumerSecret: 'cs-cred', token: 'tok-cred', tokenSecret: 'ts-cred' };
    platforms.x.addUser({ username: 'ownkeys', oauth1 });
    const own = await withApps.request('POST', '/api/v1/accounts', {
      body: { access_token: oauth1.token, access_token_secret: oauth1.tokenSecret, api_key: oauth1.consumerKey, api_secret: oauth1.consumerSecret },
    });
    assert.equal(own.status, 201, own.text);
    assert.deepEqual([own.body.data.credential_expires_at, own.body.meta.warnings], [null, []]);
    const { page } = platforms.facebook;
    const fb = await withApps.request('POST', '/api/v1/accounts', { body: { platform: 'facebook', page_id: page.id, access_token: page.token } });
    assert.equal(fb.status, 201, fb.text);
    assert.deepEqual([fb.body.data.credential_expires_at, fb.body.meta.warnings], [null, []]);
    const { user } = platforms.instagram;
    const viaFacebook = await withApps.request('POST', '/api/v1/accounts', {
      body: { platform: 'instagram', via: 'facebook', access_token: user.fbToken, ig_user_id: user.igUserId },
    });
    assert.equal(viaFacebook.status, 201, viaFacebook.text);
    assert.deepEqual([viaFacebook.body.data.credential_expires_at, viaFacebook.body.meta.warnings], [null, []]);
    assert.deepEqual(kept, []);
  });

  it('threads renews with the token alone: renewable without app credentials', async () => {
    const res = await withoutApps.request('POST', '/api/v1/accounts', { body: { platform: 'threads', access_token: platforms.threads.user.token } });
    assert.ok(res.status === 201 || res.status === 200, res.text);
    assert.deepEqual(res.body.meta.warnings, []);
    assert.ok(endsInAbout(res.body.data.credential_expires_at, 60 * 86_400));
    assert.deepEqual(kept, [res.body.data.id]);
  });

  it('linkedin accepts a refresh_token: renewable with LinkedIn app credentials, a warning without them', async () => {
    const { member } = platforms.linkedin;
    const renewable = await withApps.request('POST', '/api/v1/accounts', { body: { platform: 'linkedin', access_token: member.token, refresh_token: 'li-refresh-1' } });
    assert.equal(renewable.status, 201, renewable.text);
    assert.deepEqual(renewable.body.meta.warnings, []);
    assert.deepEqual(kept, [renewable.body.data.id]);
    assert.equal((await storedCredentials(renewable.body.data.id)).refresh_token, 'li-refresh-1');

    const other = await withoutApps.request('POST', '/api/v1/accounts', { body: { platform: 'linkedin', access_token: member.token, refresh_token: 'li-refresh-2' } });
    assert.equal(other.status, 201, other.text);
    assert.equal(other.body.meta.warnings.length, 1);
    assert.match(other.body.meta.warnings[0].message, /no LinkedIn app credentials \(HERALD_LINKEDIN_CLIENT_ID and HERALD_LINKEDIN_CLIENT_SECRET\)/);
    assert.ok(endsInAbout(other.body.data.credential_expires_at, 60 * 86_400));
    assert.deepEqual(kept, [renewable.body.data.id, other.body.data.id], 'a credential nothing can renew has its workflow too');

    const empty = await withApps.request('POST', '/api/v1/accounts', { body: { platform: 'linkedin', access_token: member.token, refresh_token: '' } });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error.code, 'bad_request');
  });

  it('a reconnect without a refresh_token keeps the stored one (never overwritten with nothing) and stays renewable', async () => {
    const user = platforms.x.addUser({ username: 'reconnecter', bearerToken: 'x-reconnect-1' });
    const first = await withApps.request('POST', '/api/v1/accounts', { body: { access_token: 'x-reconnect-1', refresh_token: 'x-reconnect-refresh' } });
    assert.equal(first.status, 201, first.text);
    user.bearerToken = 'x-reconnect-2';
    const again = await withApps.request('POST', '/api/v1/accounts', { body: { access_token: 'x-reconnect-2' } });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body.meta.warnings, [], 'still renewable with the stored refresh token');
    assert.deepEqual(await storedCredentials(first.body.data.id), { access_token: 'x-reconnect-2', refresh_token: 'x-reconnect-refresh' });
    assert.deepEqual(kept, [first.body.data.id, first.body.data.id], 'the workflow is woken to read the new token');

    user.bearerToken = 'x-reconnect-3';
    const newer = await withApps.request('POST', '/api/v1/accounts', { body: { access_token: 'x-reconnect-3', refresh_token: 'x-reconnect-refresh-2' } });
    assert.equal(newer.status, 200, newer.text);
    assert.deepEqual(await storedCredentials(first.body.data.id), { access_token: 'x-reconnect-3', refresh_token: 'x-reconnect-refresh-2' });
  });

  it('configuration: app credentials are parsed and checked at start', () => {
    assert.deepEqual(testConfig().credentialApps, { x: null, linkedin: null });
    assert.deepEqual(testConfig(appCredentials).credentialApps, {
      x: { clientId: 'conformance-client', clientSecret: 'conformance-secret' },
      linkedin: { clientId: 'li-client', clientSecret: 'li-secret', oauthUrl: 'https://www.linkedin.com' },
    });
    assert.deepEqual(testConfig({ HERALD_X_CLIENT_ID: 'public-client' }).credentialApps.x, { clientId: 'public-client', clientSecret: null });
    assert.equal(
      testConfig({ ...appCredentials, HERALD_LINKEDIN_OAUTH_URL: 'http://127.0.0.1:9999/' }).credentialApps.linkedin?.oauthUrl,
      'http://127.0.0.1:9999',
    );
    assert.throws(() => parseConfig({ HERALD_X_CLIENT_SECRET: 'secret' }), (err: Error) => err instanceof ConfigError && /HERALD_X_CLIENT_SECRET needs HERALD_X_CLIENT_ID/.test(err.message));
    assert.throws(() => parseConfig({ HERALD_LINKEDIN_CLIENT_ID: 'id' }), (err: Error) => err instanceof ConfigError && /HERALD_LINKEDIN_CLIENT_ID and HERALD_LINKEDIN_CLIENT_SECRET go together/.test(err.message));
    assert.throws(() => parseConfig({ HERALD_LINKEDIN_OAUTH_URL: 'ftp://linkedin' }), (err: Error) => err instanceof ConfigError && /HERALD_LINKEDIN_OAUTH_URL/.test(err.message));
  });
});
