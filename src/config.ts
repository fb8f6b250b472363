import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { packageRoot } from './package-root';

/**
 * Herald's configuration: every environment variable the service reads, parsed once with zod.
 * No other module reads `process.env`; everything else receives a `Config`.
 */

export const defaultComingSoon =
  'tiktok,youtube,pinterest,google_business,facebook:comments,instagram:comments,threads:comments,linkedin:comments';

const booleanFlag = z
  .enum(['true', 'false', '1', '0'])
  .default('false')
  .transform((value) => value === 'true' || value === '1');

const httpUrl = (fallback: string) =>
  z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .default(fallback)
    .transform((value) => value.replace(/\/+$/, ''));

// Blank is unset before parsing (`withoutEmptyValues`).
const optionalText = z
  .string()
  .optional()
  .transform((value) => value?.trim());

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: optionalText.pipe(
    z.union([z.undefined(), z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')]),
  ),
  HERALD_DATA_DIR: optionalText,
  TEMPORAL_ADDRESS: optionalText,
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  HERALD_X_API_URL: httpUrl('https://api.x.com'),
  HERALD_TELEGRAM_API_URL: httpUrl('https://api.telegram.org'),
  HERALD_FACEBOOK_API_URL: httpUrl('https://graph.facebook.com/v25.0'),
  HERALD_INSTAGRAM_API_URL: httpUrl('https://graph.instagram.com/v25.0'),
  HERALD_THREADS_API_URL: httpUrl('https://graph.threads.net/v1.0'),
  HERALD_LINKEDIN_API_URL: httpUrl('https://api.linkedin.com'),
  HERALD_ALLOW_INSECURE_URLS: booleanFlag,
  HERALD_PUBLIC_URL: optionalText.pipe(z.union([z.undefined(), z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })])),
  HERALD_ENCRYPTION_KEY: optionalText,
  HERALD_COMING_SOON: z.string().default(defaultComingSoon),
  HERALD_BODY_LIMIT: z.string().regex(/^\d+(b|kb|mb)$/i, 'must look like 512kb or 1mb').default('1mb'),
  HERALD_EMBEDDED_POSTGRES_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  HERALD_DUE_LEAD_MS: z.coerce.number().int().min(0).max(3_600_000).default(120_000),
  HERALD_X_CLIENT_ID: optionalText,
  HERALD_X_CLIENT_SECRET: optionalText,
  HERALD_LINKEDIN_CLIENT_ID: optionalText,
  HERALD_LINKEDIN_CLIENT_SECRET: optionalText,
  HERALD_LINKEDIN_OAUTH_URL: httpUrl('https://www.linkedin.com'),
  HERALD_WEB_UI: z
    .enum(['true', 'false', '1', '0'])
    .default('true')
    .transform((value) => value !== 'false' && value !== '0'),
  HERALD_WEB_UI_PORT: z.coerce.number().int().min(0).max(65535).default(8233),
  HERALD_WEB_UI_HOST: z.string().min(1).default('127.0.0.1'),
  TEMPORAL_WEB_UI_URL: optionalText.pipe(z.union([z.undefined(), z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })])),
});

export interface Config {
  env: 'development' | 'test' | 'production';
  port: number;
  host: string;
  /** Null: the embedded PostgreSQL under `dataDir` is used. */
  databaseUrl: string | null;
  /**
   * Absolute. Unset: `.data` of the package root, where `npm start` runs, so `npx herald` from any directory of the
   * checkout finds the same cluster and key. Set relative: from the current directory, as a path given is read.
   */
  dataDir: string;
  temporal: { address: string | null; namespace: string };
  platformUrls: { x: string; telegram: string; facebook: string; instagram: string; threads: string; linkedin: string };
  allowInsecureUrls: boolean;
  /**
   * HERALD_PUBLIC_URL: where platforms reach Herald (signed media URLs); default `http://127.0.0.1:<PORT>`, which
   * NODE_ENV=production refuses (as any loopback address).
   */
  publicUrl: string;
  /** 32 bytes. Null only in production when unset (then `requireEncryptionKey` refuses to start). */
  encryptionKey: Buffer | null;
  /** Entries `platform` or `platform:feature`, lower-case. */
  comingSoon: ReadonlySet<string>;
  bodyLimit: string;
  /** 0: pick a free port when the embedded cluster starts. */
  embeddedPostgresPort: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  shutdownTimeoutMs: number;
  /** How long before its time a scheduled post's workflow prepares it (issue 15, README "Scheduled bursts"); 0: at its time. */
  dueLeadMs: number;
  /**
   * The app credentials that renew users' tokens (decisions.md "Keeping credentials alive"); null when not configured.
   * x: `clientSecret` null for a public client. linkedin: `oauthUrl` is the origin of its token endpoint.
   */
  credentialApps: {
    x: { clientId: string; clientSecret: string | null } | null;
    linkedin: { clientId: string; clientSecret: string; oauthUrl: string } | null;
  };
  /** The Temporal Web UI beside the embedded Temporal server (never with TEMPORAL_ADDRESS); port 0 = a free port. */
  webUi: { enabled: boolean; port: number; host: string };
  /** The Web UI of the Temporal cluster (`TEMPORAL_WEB_UI_URL`), for links an operator opens; null = the embedded one's, if up. */
  temporalWebUiUrl: string | null;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Parse the environment. Throws `ConfigError` naming every bad variable. Does not touch the disk. */
export function parseConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const parsed = envSchema.safeParse(withoutEmptyValues(env));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL ?? null,
    dataDir: e.HERALD_DATA_DIR === undefined ? path.join(packageRoot, '.data') : path.resolve(cwd, e.HERALD_DATA_DIR),
    temporal: { address: e.TEMPORAL_ADDRESS ?? null, namespace: e.TEMPORAL_NAMESPACE },
    platformUrls: {
      x: e.HERALD_X_API_URL,
      telegram: e.HERALD_TELEGRAM_API_URL,
      facebook: e.HERALD_FACEBOOK_API_URL,
      instagram: e.HERALD_INSTAGRAM_API_URL,
      threads: e.HERALD_THREADS_API_URL,
      linkedin: e.HERALD_LINKEDIN_API_URL,
    },
    allowInsecureUrls: e.HERALD_ALLOW_INSECURE_URLS,
    publicUrl: publicUrlOf(e),
    encryptionKey: e.HERALD_ENCRYPTION_KEY === undefined ? null : decodeEncryptionKey(e.HERALD_ENCRYPTION_KEY),
    comingSoon: new Set(
      e.HERALD_COMING_SOON.split(',')
        .map((entry) => entry.trim().toLowerCase())
        .filter((entry) => entry !== ''),
    ),
    bodyLimit: e.HERALD_BODY_LIMIT.toLowerCase(),
    embeddedPostgresPort: e.HERALD_EMBEDDED_POSTGRES_PORT,
    logLevel: e.LOG_LEVEL,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    dueLeadMs: e.HERALD_DUE_LEAD_MS,
    credentialApps: credentialAppsOf(e),
    webUi: { enabled: e.HERALD_WEB_UI, port: e.HERALD_WEB_UI_PORT, host: e.HERALD_WEB_UI_HOST },
    temporalWebUiUrl: e.TEMPORAL_WEB_UI_URL?.replace(/\/+$/, '') ?? null,
  };
}

/**
 * A variable set to nothing (`PORT=`, a compose file's `${VAR}` of an unset one) is unset: its default applies. zod's
 * coercion reads '' as 0, so `PORT=` bound a random port, `HERALD_WEB_UI_PORT=` a random UI port and
 * `HERALD_DUE_LEAD_MS=` switched the lead off, all silently.
 */
function withoutEmptyValues(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
}

/**
 * Where Instagram, Threads and Facebook fetch the media of a post (signed links). Outside production the loopback
 * default serves the stand-ins; in production a loopback address would send every platform a link it cannot open,
 * and the posts would fail at the platform, so it stops the start instead (unless insecure URLs are allowed).
 */
function publicUrlOf(e: z.output<typeof envSchema>): string {
  const url = (e.HERALD_PUBLIC_URL ?? `http://127.0.0.1:${e.PORT}`).replace(/\/+$/, '');
  // HERALD_ALLOW_INSECURE_URLS (benches and tests in production mode against stand-ins on this machine) allows it.
  if (e.NODE_ENV === 'production' && !e.HERALD_ALLOW_INSECURE_URLS && (e.HERALD_PUBLIC_URL === undefined || isLoopback(new URL(url).hostname))) {
    throw new ConfigError(
      `Invalid configuration: HERALD_PUBLIC_URL must be set to the address where platforms reach Herald (not a loopback one) when NODE_ENV=production${e.HERALD_PUBLIC_URL === undefined ? '' : `; it is ${url}`}`,
    );
  }
  return url;
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || /^127\./.test(host) || host === '::1' || host === '0.0.0.0' || host === '::';
}

/** A secret without its client id, or half of LinkedIn's pair, is a mistake worth stopping for. */
function credentialAppsOf(e: z.output<typeof envSchema>): Config['credentialApps'] {
  const problems: string[] = [];
  if (e.HERALD_X_CLIENT_SECRET && !e.HERALD_X_CLIENT_ID) problems.push('HERALD_X_CLIENT_SECRET needs HERALD_X_CLIENT_ID');
  if (Boolean(e.HERALD_LINKEDIN_CLIENT_ID) !== Boolean(e.HERALD_LINKEDIN_CLIENT_SECRET)) {
    problems.push('HERALD_LINKEDIN_CLIENT_ID and HERALD_LINKEDIN_CLIENT_SECRET go together');
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  return {
    x: e.HERALD_X_CLIENT_ID ? { clientId: e.HERALD_X_CLIENT_ID, clientSecret: e.HERALD_X_CLIENT_SECRET ?? null } : null,
    linkedin:
      e.HERALD_LINKEDIN_CLIENT_ID && e.HERALD_LINKEDIN_CLIENT_SECRET
        ? { clientId: e.HERALD_LINKEDIN_CLIENT_ID, clientSecret: e.HERALD_LINKEDIN_CLIENT_SECRET, oauthUrl: e.HERALD_LINKEDIN_OAUTH_URL }
        : null,
  };
}

/** 64 hex characters or base64 of 32 bytes. */
function decodeEncryptionKey(value: string): Buffer {
  const isHex = /^[0-9a-fA-F]{64}$/.test(value);
  const isBase64 = /^[A-Za-z0-9+/]{43}=?$/.test(value);
  const bytes = isHex ? Buffer.from(value, 'hex') : isBase64 ? Buffer.from(value, 'base64') : Buffer.alloc(0);
  if (bytes.length !== 32) {
    throw new ConfigError(
      'Invalid configuration: HERALD_ENCRYPTION_KEY must be 32 bytes written as 64 hex characters or base64 (generate one with `openssl rand -hex 32`)',
    );
  }
  return bytes;
}

const encryptionKeyFile = 'encryption.key';

/**
 * Parse the environment and settle the encryption key: outside production, an unset key is generated once into
 * `<dataDir>/encryption.key` (mode 0600) and read back on every later start, so stored credentials stay readable.
 * In production an unset key is a configuration error.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const config = parseConfig(env, cwd);
  if (config.encryptionKey !== null) return config;
  if (config.env === 'production') {
    throw new ConfigError('Invalid configuration: HERALD_ENCRYPTION_KEY is required when NODE_ENV=production');
  }
  return { ...config, encryptionKey: developmentEncryptionKey(config.dataDir) };
}

function developmentEncryptionKey(dataDir: string): Buffer {
  const file = path.join(dataDir, encryptionKeyFile);
  try {
    return decodeEncryptionKey(readFileSync(file, 'utf8').trim());
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      if (err instanceof ConfigError) throw new ConfigError(`${err.message} (read from ${file})`);
      throw err;
    }
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const key = randomBytes(32);
  // 'wx': two processes starting at once must not both write different keys.
  try {
    writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return decodeEncryptionKey(readFileSync(file, 'utf8').trim());
    throw err;
  }
}
