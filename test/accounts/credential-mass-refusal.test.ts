import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { openCredentials } from '../../src/accounts/credentials';
import { renewAccountCredential, type CredentialRenewalDeps } from '../../src/accounts/credential-renewal';
import { massRefusalCounts } from '../../src/accounts/mass-refusal';
import type { AccountLifecycle } from '../../src/accounts/lifecycle';
import { createLogger } from '../../src/logger';
import { createHttpClient } from '../../src/net/http';
import { RenewalSetupFailure } from '../../src/platforms/renewal/token-endpoint';
import { createGraphRenewer } from '../../src/platforms/graph/refresh';
import { createXRenewer } from '../../src/platforms/x/refresh';
import { createUser } from '../../src/users/users';
import { testEncryptionKey } from '../helpers/api';
import { runCli } from '../helpers/cli';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { startPlatformStandIns, type PlatformStandIns } from '../helpers/platform-standins';
import { insertAccount, testSealedBox } from '../posts/fixtures';

/**
 * The mass-loss guard (README "Credentials", 2026-12-07): X refusing every renewal alike (an outage, or Herald's app
 * refused under a code that reads as the user's) loses a few connections, not every one; the rest are held back,
 * their credentials kept, and logged as an error. Once X renews again, a user who did revoke is lost as before.
 */

const HOUR = 60 * 60_000;
const TOKEN_PATH = '/2/oauth2/token';
// How X refuses a spent, revoked or unknown refresh token (protocols.md section 13).
const refusedAlike = { kind: 'reply' as const, response: { status: 400, json: { error: 'invalid_request', error_description: 'Value passed for the token was invalid.' } } };

describe('Many renewals of one platform refused at once', function () {
  this.timeout(120_000);
  // A database of its own: the guard counts every x account's refusals and renewals.
  let database: TestDatabase;
  let platforms: PlatformStandIns;
  const http = createHttpClient({ allowInsecure: true, timeoutMs: 5_000 });
  const logged: Array<{ level: string; msg: string; refused?: number; renewed?: number }> = [];
  const logger = createLogger('debug', { write: (line: string) => void logged.push(JSON.parse(line)) });
  const cancelled: string[] = [];
  const lifecycle: AccountLifecycle = { accountDeactivated: async (accountId) => void cancelled.push(accountId) };
  let deps: CredentialRenewalDeps;
  let userId: string;

  before(async () => {
    database = await createTestDatabase();
    platforms = await startPlatformStandIns();
    const x = createXRenewer({ http, origin: platforms.x.origin, app: { clientId: 'conformance-client', clientSecret: 'conformance-secret' } });
    const threads = createGraphRenewer({ http, platform: 'threads', apiUrl: `${platforms.threads.origin}/v1.0` });
    deps = { db: database.db, sealedBox: testSealedBox, renewers: { x, threads }, logger, lifecycle };
    userId = (await createUser(database.db, { plan: 'pro' })).id;
  });
  after(async () => {
    await platforms?.stop();
    await http.close();
    await database?.close();
  });

  const account = (id: string) => database.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  async function xAccount(): Promise<{ id: string; refreshToken: string }> {
    const now = Date.now();
    const user = platforms.x.addUser({ username: `user${randomUUID().slice(0, 8)}` });
    const pair = platforms.x.issueTokens(user, now, 7200);
    const row = await insertAccount(database.db, userId, {
      platform: 'x',
      platform_account_id: user.id,
      username: user.username,
      credentials: { access_token: pair.accessToken, refresh_token: pair.refreshToken },
      settings: { user_id: user.id, username: user.username },
      credential_issued_at: new Date(now - 2 * HOUR),
      credential_expires_at: new Date(now),
    });
    return { id: row.id, refreshToken: pair.refreshToken };
  }

  const renew = (id: string) => renewAccountCredential(deps, id, { now: Date.now() });

  it('loses four connections, then holds back every further refusal: active, refresh token kept, an operator error', async () => {
    const accounts = [];
    for (let i = 0; i < 8; i++) accounts.push(await xAccount());
    platforms.x.standIn.inject({ path: TOKEN_PATH }, refusedAlike, 100);
    try {
      for (const [i, { id, refreshToken }] of accounts.entries()) {
        if (i < 4) {
          assert.deepEqual(await renew(id), { kind: 'lost' }, `refusal ${i + 1} loses the connection`);
          continue;
        }
        await assert.rejects(renew(id), (err) => err instanceof RenewalSetupFailure && err.kind === 'retryable', `refusal ${i + 1} is held back`);
        const row = await account(id);
        assert.deepEqual({ active: row.active, inactive_reason: row.inactive_reason }, { active: true, inactive_reason: null }, `account ${i + 1} stays active`);
        assert.equal(openCredentials(testSealedBox, row.user_id, row.credentials_sealed!).refresh_token, refreshToken, 'its refresh token is kept');
      }
      // Tried again while X still refuses: still held (the account's refusal is counted once).
      await assert.rejects(renew(accounts[7]!.id), RenewalSetupFailure);
    } finally {
      platforms.x.standIn.clearFaults();
    }
    assert.deepEqual(cancelled, accounts.slice(0, 4).map((a) => a.id), 'only the four lost accounts had their posts cancelled');
    // Once per held account as its hold begins; the retry at debug level (an outage would repeat it every few minutes).
    const held = logged.filter((l) => l.msg.startsWith('credential renewal refusals held back'));
    assert.deepEqual(held.map((l) => l.level), ['error', 'error', 'error', 'error', 'debug']);
    assert.deepEqual({ refused: held[0]!.refused, renewed: held[0]!.renewed }, { refused: 5, renewed: 0 });

    // X answers again: the held accounts renew; three more renew on time. A user who did revoke is then lost.
    for (const { id } of accounts.slice(4)) assert.equal((await renew(id)).kind, 'renewed');
    const over = logged.filter((l) => l.msg === 'credential renewed again: its held refusal is over');
    assert.deepEqual(over.map((l) => l.level), ['info', 'info', 'info', 'info'], 'the end of each hold, once');
    for (let i = 0; i < 3; i++) assert.equal((await renew((await xAccount()).id)).kind, 'renewed');
    const revoked = await xAccount();
    platforms.x.revokeRefreshToken(revoked.refreshToken);
    assert.deepEqual(await renew(revoked.id), { kind: 'lost' }, 'five refused in the hour against seven renewed: marked');
    assert.equal((await account(revoked.id)).inactive_reason, 'connection_lost');
  });

  /** A threads account whose 60-day token is due (renewed with the token itself). */
  async function threadsAccount(): Promise<string> {
    const now = Date.now();
    const row = await insertAccount(database.db, userId, {
      platform: 'threads',
      platform_account_id: `threads-${randomUUID()}`,
      username: `user${randomUUID().slice(0, 8)}`,
      credentials: { access_token: `threads-token-${randomUUID()}` },
      settings: {},
      credential_issued_at: new Date(now - 50 * 24 * HOUR),
      credential_expires_at: new Date(now + 10 * 24 * HOUR),
    });
    return row.id;
  }

  // protocols.md section 13: Graph refuses with code 190; a subcode names the account's own end (463 expired, 460
  // password changed, ...), none leaves it open.
  const graphRefusal = (subcode?: number) => ({
    kind: 'reply' as const,
    response: { status: 400, json: { error: { message: 'Error validating access token', type: 'OAuthException', code: 190, ...(subcode ? { error_subcode: subcode } : {}), fbtrace_id: 'x' } } },
  });

  it('threads: a bare 190 to many renewals is held back after four; one naming the account\'s own end (463) is lost even then', async () => {
    const accounts = [];
    for (let i = 0; i < 6; i++) accounts.push(await threadsAccount());
    cancelled.length = 0;
    platforms.threads.standIn.inject({ path: /refresh_access_token/ }, graphRefusal(), 100);
    try {
      for (const [i, id] of accounts.entries()) {
        if (i < 4) assert.deepEqual(await renew(id), { kind: 'lost' }, `refusal ${i + 1} loses the connection`);
        else await assert.rejects(renew(id), (err) => err instanceof RenewalSetupFailure && /held back/.test(err.fix), `refusal ${i + 1} is held back`);
      }
      const held = await account(accounts[5]!);
      assert.deepEqual({ active: held.active, inactive_reason: held.inactive_reason }, { active: true, inactive_reason: null });
    } finally {
      platforms.threads.standIn.clearFaults();
    }
    // While the bare refusals still hold, a token that ended (463) is the account's own end: lost, not held.
    const ended = await threadsAccount();
    platforms.threads.standIn.inject({ path: /refresh_access_token/ }, graphRefusal(463), 1);
    assert.deepEqual(await renew(ended), { kind: 'lost' });
    assert.equal((await account(ended)).inactive_reason, 'connection_lost');
    assert.deepEqual(cancelled, [...accounts.slice(0, 4), ended]);
  });

  it('an operator releases the held refusals (`herald credentials release`): the next refusal of each loses the connection', async () => {
    // The threads refusals above still hold, so these two are held at once.
    const held = [await threadsAccount(), await threadsAccount()];
    platforms.threads.standIn.inject({ path: /refresh_access_token/ }, graphRefusal(), 100);
    try {
      for (const id of held) await assert.rejects(renew(id), (err) => err instanceof RenewalSetupFailure && /held back/.test(err.fix));
      const env = { DATABASE_URL: database.url, HERALD_ENCRYPTION_KEY: testEncryptionKey };
      const usage = await runCli(['credentials', 'release', '--platform', 'myspace'], env);
      assert.equal(usage.code, 2, 'not a platform');
      // Listed without being released: each held account with its first and latest refusal, and the guard's counts.
      const listed = await runCli(['credentials', 'held', '--platform', 'threads'], env);
      assert.equal(listed.code, 0, listed.stdout);
      const list = JSON.parse(listed.stdout) as { held: Array<{ account_id: string; platform: string; first_refused_at: string; refused_at: string }>; counts: Record<string, { refused: number; renewed: number }> };
      assert.ok(held.every((id) => list.held.some((r) => r.account_id === id && r.platform === 'threads')), listed.stdout);
      assert.ok(list.held.every((r) => r.platform === 'threads' && Date.parse(r.first_refused_at) <= Date.parse(r.refused_at)));
      assert.ok(list.counts.threads!.refused > list.held.length, 'the lost accounts still count, but are not listed');
      assert.equal(JSON.parse((await runCli(['credentials', 'held', '--platform', 'threads'], env)).stdout).held.length, list.held.length, 'listing releases nothing');
      const cli = await runCli(['credentials', 'release', '--platform', 'threads', '--account', held[0]!], env);
      assert.equal(cli.code, 0, cli.stdout);
      const out = JSON.parse(cli.stdout) as { platform: string; released: Array<{ account_id: string }> };
      assert.deepEqual({ platform: out.platform, released: out.released.map((r) => r.account_id) }, { platform: 'threads', released: [held[0]] });
      cancelled.length = 0;
      assert.deepEqual(await renew(held[0]!), { kind: 'lost' }, 'released: its next refusal is marked');
      await assert.rejects(renew(held[1]!), RenewalSetupFailure, 'the other is still held');
      const all = JSON.parse((await runCli(['credentials', 'release', '--platform', 'threads'], env)).stdout) as { released: Array<{ account_id: string }> };
      assert.ok(all.released.some((r) => r.account_id === held[1]) && !all.released.some((r) => r.account_id === held[0]), 'every held one, not the lost');
      assert.deepEqual(await renew(held[1]!), { kind: 'lost' });
      assert.deepEqual(cancelled, held);
    } finally {
      platforms.threads.standIn.clearFaults();
    }
  });

  it("the guard's renewed count reads an index, not every account (migration 0278)", async () => {
    // The guard's own count (`massRefusalCounts`, as `recordRefusal` runs it); the plan is asked with sequential scans
    // priced out, as this database is small.
    const plan = await database.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const rows = await sql<{ 'QUERY PLAN': string }>`explain ${massRefusalCounts('x')}`.execute(trx);
      return rows.rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    assert.match(plan, /accounts_renewed_idx/, plan);
  });
});
