/**
 * API test helper: the real app (`createApp`) on a random port, over the run's real test database, with a fresh
 * user and API key.
 *
 *   testConfig(env?: Record<string, string>): Config
 *     Configuration for tests (NODE_ENV=test, insecure URLs allowed, fixed encryption key, silent logs).
 *   startApi(options?: StartApiOptions): Promise<TestApi>
 *     options: { plan?: PlanName (default 'free'); scopes?: Scope[] | null (default null = full access);
 *                database?: TestDatabase (default testDatabase()); deps?: Partial<AppDeps>; routes?: AnyRoute[] }
 *     TestApi: { url; deps: AppDeps; userId; apiKey; keyId;
 *                request(method, path, options?) (uses apiKey unless options.key is given, null = no header);
 *                newUser(plan?, scopes?) → { userId, apiKey, keyId } in the same database;
 *                close() }
 *   request(baseUrl, method, path, options?: { key?: string | null; body?: unknown; rawBody?: string;
 *           headers?: Record<string, string> }): Promise<TestResponse>
 *     `body` is sent as JSON with Content-Type: application/json; `rawBody` is sent as is (set your own headers).
 *     TestResponse: { status: number; headers: Headers; body: any (parsed JSON, or the text when not JSON); text: string }
 *   createUserWithKey(db, plan?, scopes?): Promise<{ userId; apiKey; keyId }>
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/deps';
import type { AnyRoute } from '../../api/route';
import { createApiKey } from '../../src/auth/api-keys';
import type { ScopeList } from '../../src/auth/scopes';
import { type Config, parseConfig } from '../../src/config';
import type { Db } from '../../src/db';
import { createLogger } from '../../src/logger';
import type { PlanName } from '../../src/plans';
import { createUser } from '../../src/users/users';
import { type TestDatabase, testDatabase } from './db';

export const testEncryptionKey = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';

export function testConfig(env: Record<string, string> = {}): Config {
  return parseConfig(
    {
      NODE_ENV: 'test',
      PORT: '0',
      HERALD_ALLOW_INSECURE_URLS: 'true',
      HERALD_ENCRYPTION_KEY: testEncryptionKey,
      LOG_LEVEL: 'silent',
      HERALD_WEB_UI: 'false',
      // A scheduled post is prepared a quarter second ahead: the suites take the held path without waiting long.
      HERALD_DUE_LEAD_MS: '250',
      ...env,
    },
    process.cwd(),
  );
}

interface TestResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

interface RequestOptions {
  key?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export async function request(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = {};
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  } else if (options.rawBody !== undefined) {
    body = options.rawBody;
  }
  const response = await fetch(baseUrl + path, { method, headers: { ...headers, ...options.headers }, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

export async function createUserWithKey(db: Db, plan: PlanName = 'free', scopes: ScopeList = null) {
  const user = await createUser(db, { plan });
  const { row, apiKey } = await createApiKey(db, { userId: user.id, name: 'test', scopes, expiresAt: null });
  return { userId: user.id, apiKey, keyId: row.id };
}

interface StartApiOptions {
  plan?: PlanName;
  scopes?: ScopeList;
  database?: TestDatabase;
  deps?: Partial<AppDeps>;
  routes?: readonly AnyRoute[];
}

export interface TestApi {
  url: string;
  deps: AppDeps;
  userId: string;
  apiKey: string;
  keyId: string;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  newUser(plan?: PlanName, scopes?: ScopeList): Promise<{ userId: string; apiKey: string; keyId: string }>;
  close(): Promise<void>;
}

export async function startApi(options: StartApiOptions = {}): Promise<TestApi> {
  const database = options.database ?? (await testDatabase());
  const deps: AppDeps = {
    config: testConfig(),
    db: database.db,
    pool: database.pool,
    logger: createLogger('silent'),
    ...options.deps,
  };
  const app = createApp(deps, options.routes);
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const user = await createUserWithKey(database.db, options.plan ?? 'free', options.scopes ?? null);
  return {
    url,
    deps,
    ...user,
    request: (method, path, requestOptions = {}) =>
      request(url, method, path, { ...requestOptions, key: requestOptions.key === undefined ? user.apiKey : requestOptions.key }),
    newUser: (plan = 'free', scopes = null) => createUserWithKey(database.db, plan, scopes),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
