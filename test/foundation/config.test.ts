import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, defaultComingSoon, loadConfig, parseConfig } from '../../src/config';
import { packageRoot } from '../../src/package-root';

describe('config', () => {
  it('works with no environment at all, with the documented defaults', () => {
    const config = parseConfig({}, '/srv/herald');
    // Compared on the variables of decisions.md "Running it"; features that add variables assert their own.
    const expected = {
      env: 'development',
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: null,
      dataDir: path.join(packageRoot, '.data'),
      temporal: { address: null, namespace: 'default' },
      platformUrls: {
        x: 'https://api.x.com',
        telegram: 'https://api.telegram.org',
        facebook: 'https://graph.facebook.com/v25.0',
        instagram: 'https://graph.instagram.com/v25.0',
        threads: 'https://graph.threads.net/v1.0',
        linkedin: 'https://api.linkedin.com',
      },
      allowInsecureUrls: false,
      encryptionKey: null,
      comingSoon: defaultComingSoon.split(','),
      bodyLimit: '1mb',
      embeddedPostgresPort: 0,
      logLevel: 'info',
      shutdownTimeoutMs: 30000,
    };
    const actual: Record<string, unknown> = { ...config, comingSoon: [...config.comingSoon] };
    assert.deepEqual(Object.fromEntries(Object.keys(expected).map((key) => [key, actual[key]])), expected);
  });

  it('finds the default data dir at the package root from any directory; a relative HERALD_DATA_DIR is from the current one', () => {
    const root = path.resolve(__dirname, '..', '..', '..');
    assert.equal(parseConfig({}, path.join(root, 'src')).dataDir, path.join(root, '.data'));
    assert.equal(parseConfig({}, '/').dataDir, path.join(root, '.data'));
    assert.equal(parseConfig({ HERALD_DATA_DIR: 'state' }, '/srv/herald').dataDir, '/srv/herald/state');
  });

  it('reads every variable', () => {
    const config = parseConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://u:p@db:5432/herald',
      HERALD_DATA_DIR: '/var/lib/herald',
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'herald',
      HERALD_X_API_URL: 'http://127.0.0.1:9999/',
      HERALD_ALLOW_INSECURE_URLS: 'true',
      HERALD_ENCRYPTION_KEY: 'a'.repeat(64),
      HERALD_COMING_SOON: 'tiktok, Threads:comments',
      LOG_LEVEL: 'debug',
    });
    assert.equal(config.port, 8080);
    assert.equal(config.databaseUrl, 'postgres://u:p@db:5432/herald');
    assert.equal(config.dataDir, '/var/lib/herald');
    assert.deepEqual(config.temporal, { address: 'temporal:7233', namespace: 'herald' });
    assert.equal(config.platformUrls.x, 'http://127.0.0.1:9999');
    assert.equal(config.allowInsecureUrls, true);
    assert.deepEqual(config.encryptionKey, Buffer.alloc(32, 0xaa));
    assert.deepEqual([...config.comingSoon], ['tiktok', 'threads:comments']);
    assert.equal(config.logLevel, 'debug');
  });

  it('names the bad variable in a clear message', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ PORT: 'eighty' }, /^Invalid configuration: PORT /],
      [{ PORT: '70000' }, /^Invalid configuration: PORT /],
      [{ DATABASE_URL: 'mysql://x' }, /^Invalid configuration: DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL$/],
      [{ HERALD_X_API_URL: 'ftp://x' }, /^Invalid configuration: HERALD_X_API_URL must be an http\(s\) URL$/],
      [{ HERALD_ALLOW_INSECURE_URLS: 'yes' }, /^Invalid configuration: HERALD_ALLOW_INSECURE_URLS /],
      [{ LOG_LEVEL: 'loud' }, /^Invalid configuration: LOG_LEVEL /],
      [{ HERALD_ENCRYPTION_KEY: 'short' }, /^Invalid configuration: HERALD_ENCRYPTION_KEY must be 32 bytes/],
      [{ PORT: 'x', LOG_LEVEL: 'loud' }, /PORT .*; LOG_LEVEL /],
    ];
    for (const [env, message] of cases) {
      assert.throws(() => parseConfig(env), (err: unknown) => err instanceof ConfigError && message.test(err.message), JSON.stringify(env));
    }
  });

  it('reads a variable set to nothing as unset: its default, never 0', () => {
    const config = parseConfig({
      PORT: '',
      HOST: ' ',
      HERALD_WEB_UI_PORT: '',
      HERALD_DUE_LEAD_MS: '',
      HERALD_EMBEDDED_POSTGRES_PORT: '',
      SHUTDOWN_TIMEOUT_MS: '',
      TEMPORAL_NAMESPACE: '',
      HERALD_BODY_LIMIT: '',
      HERALD_COMING_SOON: '',
      HERALD_ALLOW_INSECURE_URLS: '',
      HERALD_WEB_UI: '',
      NODE_ENV: '',
      LOG_LEVEL: '',
    });
    assert.equal(config.port, 3000);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.webUi.port, 8233);
    assert.equal(config.webUi.enabled, true);
    assert.equal(config.dueLeadMs, 120_000);
    assert.equal(config.embeddedPostgresPort, 0);
    assert.equal(config.shutdownTimeoutMs, 30_000);
    assert.equal(config.temporal.namespace, 'default');
    assert.equal(config.bodyLimit, '1mb');
    assert.deepEqual([...config.comingSoon], defaultComingSoon.split(','));
    assert.equal(config.allowInsecureUrls, false);
    assert.equal(config.env, 'development');
    assert.equal(config.logLevel, 'info');
    // 0 written out is still 0: a free port, no lead.
    assert.equal(parseConfig({ PORT: '0', HERALD_DUE_LEAD_MS: '0' }).port, 0);
    assert.equal(parseConfig({ PORT: '0', HERALD_DUE_LEAD_MS: '0' }).dueLeadMs, 0);
  });

  it('accepts a base64 encryption key', () => {
    const key = Buffer.alloc(32, 7);
    assert.deepEqual(parseConfig({ HERALD_ENCRYPTION_KEY: key.toString('base64') }).encryptionKey, key);
  });

  it('refuses to start in production without a HERALD_PUBLIC_URL, or with a loopback one', () => {
    const production = { NODE_ENV: 'production', HERALD_ENCRYPTION_KEY: 'a'.repeat(64) };
    assert.throws(() => parseConfig(production), {
      name: 'ConfigError',
      message: 'Invalid configuration: HERALD_PUBLIC_URL must be set to the address where platforms reach Herald (not a loopback one) when NODE_ENV=production',
    });
    for (const loopback of ['http://127.0.0.1:3000', 'http://localhost:3000/', 'http://[::1]:3000']) {
      assert.throws(() => parseConfig({ ...production, HERALD_PUBLIC_URL: loopback }), /HERALD_PUBLIC_URL must be set .*; it is http:\/\/(127\.0\.0\.1|localhost|\[::1\]):3000$/, loopback);
    }
    assert.equal(parseConfig({ ...production, HERALD_PUBLIC_URL: 'https://herald.example.com/' }).publicUrl, 'https://herald.example.com');
    assert.equal(parseConfig({ NODE_ENV: 'development', PORT: '8080' }).publicUrl, 'http://127.0.0.1:8080');
    // Benches run production mode against stand-ins on this machine.
    assert.equal(parseConfig({ ...production, PORT: '8080', HERALD_ALLOW_INSECURE_URLS: 'true' }).publicUrl, 'http://127.0.0.1:8080');
  });

  it('refuses to start in production without an encryption key', () => {
    assert.throws(() => loadConfig({ NODE_ENV: 'production', HERALD_PUBLIC_URL: 'https://herald.example.com' }), {
      name: 'ConfigError',
      message: 'Invalid configuration: HERALD_ENCRYPTION_KEY is required when NODE_ENV=production',
    });
  });

  it('generates a development encryption key once into the data dir and reuses it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'herald-config-'));
    try {
      const first = loadConfig({ HERALD_DATA_DIR: dir });
      const second = loadConfig({ HERALD_DATA_DIR: dir });
      assert.equal(first.encryptionKey!.length, 32);
      assert.deepEqual(second.encryptionKey, first.encryptionKey);
      const file = path.join(dir, 'encryption.key');
      assert.equal((await readFile(file, 'utf8')).trim(), first.encryptionKey!.toString('hex'));
      assert.equal((await stat(file)).mode & 0o777, 0o600);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
