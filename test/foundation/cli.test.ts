import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { migrations } from '../../migrations';
import { migrateDown } from '../../src/db/migrate';
import { startApi } from '../helpers/api';
import { type TestDatabase, createTestDatabase } from '../helpers/db';

const cliPath = path.join(__dirname, '../../src/cli/main.js');

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

function herald(args: string[], env: Record<string, string>, cwd?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', HERALD_ENCRYPTION_KEY: 'f'.repeat(64), ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

describe('herald operator command', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let env: Record<string, string>;
  before(async () => {
    database = await createTestDatabase({ migrate: false });
    env = { DATABASE_URL: database.url };
  });

  it('migrate applies every migration, then nothing', async () => {
    const first = await herald(['migrate'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(first.json, { applied: Object.keys(migrations) });
    const second = await herald(['migrate'], env);
    assert.deepEqual(second.json, { applied: [] });
  });

  it('other commands leave pending migrations to `herald migrate` (a server of the previous version may run), naming them', async () => {
    const older = await createTestDatabase();
    try {
      const [reverted] = await migrateDown(older.db);
      const created = await herald(['users', 'create', '--plan', 'free'], { DATABASE_URL: older.url });
      assert.equal(created.code, 1);
      assert.equal(created.stdout, '');
      assert.equal(
        created.stderr,
        `herald: the database has 1 pending migration (${reverted}): apply them with \`herald migrate\` (or \`npm start\`), once no Herald of the previous version runs on it\n`,
      );
      const migrated = await herald(['migrate'], { DATABASE_URL: older.url });
      assert.deepEqual(migrated.json, { applied: [reverted] });
      const again = await herald(['users', 'create', '--plan', 'free'], { DATABASE_URL: older.url });
      assert.equal(again.code, 0, again.stderr);
    } finally {
      await older.close();
    }
  });

  it('users create prints a user id and a full-access key that lists posts', async () => {
    const res = await herald(['users', 'create', '--plan', 'free', '--email', 'ops@example.com'], env);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(Object.keys(res.json), ['user_id', 'api_key']);
    assert.match(res.json.api_key, /^hld_[0-9A-Za-z]{40}$/);
    const user = await database.db.selectFrom('users').selectAll().where('id', '=', res.json.user_id).executeTakeFirstOrThrow();
    assert.equal(user.plan, 'free');
    assert.equal(user.email, 'ops@example.com');
    const key = await database.db.selectFrom('api_keys').selectAll().where('user_id', '=', res.json.user_id).executeTakeFirstOrThrow();
    assert.equal(key.scopes, null);

    const own = await startApi({ database });
    try {
      const listed = await own.request('GET', '/api/v1/posts', { key: res.json.api_key });
      assert.equal(listed.status, 200);
      assert.deepEqual(listed.body, { data: [] });
      assert.equal(listed.headers.get('x-ratelimit-limit'), '120');
    } finally {
      await own.close();
    }

    const duplicate = await herald(['users', 'create', '--plan', 'pro', '--email', 'OPS@example.com'], env);
    assert.equal(duplicate.code, 1);
    assert.equal(duplicate.stderr, 'herald: a user with email OPS@example.com already exists\n');
  });

  it('users set-plan changes the plan and sets custom numbers only where the plan is custom', async () => {
    const created = await herald(['users', 'create', '--plan', 'free'], env);
    const userId = created.json.user_id;
    const res = await herald(['users', 'set-plan', '--user', userId, '--plan', 'scale', '--post-quota', '50000', '--account-limit', '400'], env);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(res.json, {
      user_id: userId,
      plan: 'scale',
      post_quota: 50000,
      scheduled_quota: null,
      account_limit: 400,
      comment_sync_quota: null,
      x_comment_read_quota: null,
    });
    // The numbers scale leaves custom and this call did not set count as 0: the operator is told which.
    assert.equal(
      res.stderr.split('\n').find((line) => line.includes('warning')),
      `herald: warning: scale leaves scheduled-quota, comment-sync-quota, x-comment-read-quota custom and they are unset, so each counts as 0 (nothing allowed) until set: herald users set-plan --user ${userId} --plan scale --scheduled-quota N --comment-sync-quota N --x-comment-read-quota N`,
    );
    const enterprise = await herald(['users', 'create', '--plan', 'enterprise'], env);
    assert.equal(enterprise.code, 0, enterprise.stderr);
    assert.match(enterprise.stderr, /herald: warning: enterprise leaves post-quota, scheduled-quota custom and they are unset/);
    const complete = await herald(['users', 'set-plan', '--user', enterprise.json.user_id, '--plan', 'enterprise', '--post-quota', '9', '--scheduled-quota', '9'], env);
    assert.equal(complete.code, 0, complete.stderr);
    assert.doesNotMatch(complete.stderr, /warning/);
    const fixed = await herald(['users', 'create', '--plan', 'pro'], env);
    assert.doesNotMatch(fixed.stderr, /warning/);
    const refused = await herald(['users', 'set-plan', '--user', userId, '--plan', 'pro', '--post-quota', '10'], env);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /^herald: --post-quota applies only where the plan's number is custom; pro fixes it\n/);
    // Moved from scale to pro, the custom 50,000 stays on the row but applies to nothing: pro's own numbers are shown.
    const moved = await herald(['users', 'set-plan', '--user', userId, '--plan', 'pro'], env);
    assert.equal(moved.code, 0, moved.stderr);
    assert.deepEqual(moved.json, {
      user_id: userId,
      plan: 'pro',
      post_quota: 5000,
      scheduled_quota: 5000,
      account_limit: 100,
      comment_sync_quota: 25000,
      x_comment_read_quota: 10000,
    });
    const missing = await herald(['users', 'set-plan', '--user', '00000000-0000-4000-8000-000000000000', '--plan', 'pro'], env);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'herald: user 00000000-0000-4000-8000-000000000000 not found\n');
  });

  it('keys create and keys revoke', async () => {
    const created = await herald(['users', 'create', '--plan', 'agent'], env);
    const userId = created.json.user_id;
    const key = await herald(['keys', 'create', '--user', userId, '--scopes', 'posts:read,posts:write', '--expires-at', '2099-01-01T00:00:00Z'], env);
    assert.equal(key.code, 0, key.stderr);
    assert.deepEqual(key.json, {
      id: key.json.id,
      api_key: key.json.api_key,
      scopes: ['posts:read', 'posts:write'],
      expires_at: '2099-01-01T00:00:00.000Z',
    });
    const revoked = await herald(['keys', 'revoke', '--key-id', key.json.id], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.json.id, key.json.id);
    const row = await database.db.selectFrom('api_keys').select('revoked_at').where('id', '=', key.json.id).executeTakeFirstOrThrow();
    assert.equal(revoked.json.revoked_at, row.revoked_at!.toISOString());

    const badScope = await herald(['keys', 'create', '--user', userId, '--scopes', 'posts:read,everything'], env);
    assert.equal(badScope.code, 2);
    assert.match(badScope.stderr, /^herald: --scopes takes a comma list of posts:read, posts:write, accounts:read, accounts:write, keys:write, webhooks:read, webhooks:write\n/);
    const unknownKey = await herald(['keys', 'revoke', '--key-id', '00000000-0000-4000-8000-000000000000'], env);
    assert.equal(unknownKey.code, 1);
    assert.equal(unknownKey.stderr, 'herald: key 00000000-0000-4000-8000-000000000000 not found\n');
  });

  it('reports usage errors on stderr with exit code 2 and nothing on stdout', async () => {
    for (const args of [[], ['users'], ['users', 'delete'], ['users', 'create'], ['users', 'create', '--plan', 'gold'], ['users', 'create', '--plan', 'free', '--colour', 'red'], ['keys', 'revoke', '--key-id', 'abc']]) {
      const res = await herald(args, env);
      assert.equal(res.code, 2, args.join(' '));
      assert.equal(res.stdout, '');
      assert.match(res.stderr, /^herald: .+\nusage:\n/, args.join(' '));
    }
  });

  it('--help prints the usage on stdout with exit code 0', async () => {
    for (const args of [['--help'], ['help'], ['-h']]) {
      const res = await herald(args, env);
      assert.deepEqual([res.code, res.stderr], [0, ''], args.join(' '));
      assert.match(res.stdout, /^usage:\n/);
    }
  });

  it('posts stuck: an unreachable TEMPORAL_ADDRESS is named, and --older-than with Temporal is a usage error', async function () {
    this.timeout(60_000);
    const unreachable = await herald(['posts', 'stuck'], { ...env, TEMPORAL_ADDRESS: '127.0.0.1:1' });
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /^herald: could not reach Temporal at TEMPORAL_ADDRESS=127\.0\.0\.1:1: /);
    const grace = await herald(['posts', 'stuck', '--older-than', '60'], { ...env, TEMPORAL_ADDRESS: '127.0.0.1:1' });
    assert.equal(grace.code, 2);
    assert.match(grace.stderr, /^herald: --older-than applies only without TEMPORAL_ADDRESS/);
  });

  it('reports a bad configuration on stderr with exit code 1', async () => {
    const res = await herald(['migrate'], { DATABASE_URL: 'mysql://nope' });
    assert.equal(res.code, 1);
    assert.equal(res.stderr, 'herald: Invalid configuration: DATABASE_URL must be a postgres:// or postgresql:// URL\n');
  });

  it('without DATABASE_URL, starts the embedded cluster under HERALD_DATA_DIR, says which on stderr, and stops it again', async function () {
    this.timeout(120_000);
    const scratch = await mkdtemp(path.join(os.tmpdir(), 'herald-cli-'));
    await chmod(scratch, 0o755);
    // A relative HERALD_DATA_DIR is read from the current directory.
    const dataDir = path.join(scratch, 'state');
    try {
      const created = await herald(['users', 'create', '--plan', 'free'], { HERALD_DATA_DIR: 'state' }, scratch);
      assert.equal(created.code, 0, created.stderr);
      assert.equal(created.stderr, `herald: data dir ${dataDir} (embedded PostgreSQL)\n`);
      const again = await herald(['keys', 'create', '--user', created.json.user_id], { HERALD_DATA_DIR: dataDir });
      assert.equal(again.code, 0, again.stderr);
      // The cluster is down again: no pid file, no server process.
      await assert.rejects(readFile(path.join(dataDir, 'postgres', 'postmaster.pid')), { code: 'ENOENT' });
      const servers = spawnSync('pgrep', ['-f', `-D ${path.join(dataDir, 'postgres')}`], { encoding: 'utf8' });
      assert.equal(servers.stdout, '');
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it('temporal-dev runs the embedded Temporal dev server in the foreground until SIGTERM', async () => {
    const child = spawn(process.execPath, [cliPath, 'temporal-dev', '--port', '0'], { env: { PATH: process.env.PATH ?? '' } });
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
        if (stderr.includes('\n')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    assert.match(stderr, /^temporal-dev listening on 127\.0\.0\.1:\d+ \(real clock, namespace default\)\n$/);
    // The dev server installs its signal handlers just after announcing itself.
    await sleep(300);
    const code = await new Promise<number | null>((resolve) => {
      child.removeAllListeners('exit');
      child.on('exit', resolve);
      child.kill('SIGTERM');
    });
    assert.equal(code, 0);
  });
});
