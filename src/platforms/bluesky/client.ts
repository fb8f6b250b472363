import { createHash } from 'node:crypto';
import { AtpAgent } from '@atproto/api';
import type { HttpClient } from '../../net/http';
import { transportCause } from '../transport';
import { PlatformFailure, type PlatformContext } from '../types';
import { checkServiceUrl } from './account';
import { classify, isSessionError } from './errors';
import { fetchVia } from './fetch';

/**
 * Sessions per account. Bluesky limits logins hard (createSession 30 per 5 minutes, a few hundred a day), so a session
 * is made once per process and account and reused: `@atproto/api` refreshes it on `ExpiredToken`; when the refresh
 * fails too, the app password logs in again once; only when Bluesky refuses that does the account need reconnecting.
 */

export interface BlueskySession {
  agent: AtpAgent;
  did: string;
  handle: string;
}

interface BlueskyClientOptions {
  http: HttpClient;
  /** The service used when an account names none (https://bsky.social in production). */
  defaultService: string;
  allowInsecure: boolean;
  now: () => Date;
  /** Sessions kept at most; the oldest is dropped beyond this. */
  maxSessions?: number;
}

export interface BlueskyClient {
  /** Logs in afresh (verify). */
  login(ctx: PlatformContext): Promise<BlueskySession>;
  /** Runs `op` with the account's session, renewing it once on a session error. Throws `PlatformFailure` only. */
  run<T>(ctx: PlatformContext, op: (session: BlueskySession) => Promise<T>): Promise<T>;
  /** Like `run` but hands back the library's raw error, for callers that must look before classifying (creates). */
  runRaw<T>(ctx: PlatformContext, op: (session: BlueskySession) => Promise<T>): Promise<T>;
}

export function createBlueskyClient(options: BlueskyClientOptions): BlueskyClient {
  const fetch = fetchVia(options.http);
  const sessions = new Map<string, Promise<BlueskySession>>();
  const maxSessions = options.maxSessions ?? 1000;

  function serviceOf(ctx: PlatformContext): string {
    const check = checkServiceUrl(ctx.credentials.service_url || options.defaultService, options.allowInsecure);
    if (!check.ok) throw new PlatformFailure('bluesky', 'reauthorize', `The Bluesky server address of this account is refused: ${check.message}`);
    return check.serviceUrl;
  }

  function keyOf(ctx: PlatformContext): string {
    const { handle, app_password: password } = ctx.credentials;
    if (!handle || !password) {
      throw new PlatformFailure('bluesky', 'reauthorize', 'Bluesky needs a handle and an app password; reconnect the account.');
    }
    const secret = createHash('sha256').update(password).digest('base64url');
    return `${serviceOf(ctx)}\n${handle.toLowerCase()}\n${secret}`;
  }

  async function createSession(ctx: PlatformContext): Promise<BlueskySession> {
    const agent = new AtpAgent({ service: serviceOf(ctx), fetch });
    try {
      const res = await agent.login({ identifier: ctx.credentials.handle!.replace(/^@/, ''), password: ctx.credentials.app_password! });
      return { agent, did: res.data.did, handle: res.data.handle };
    } catch (err) {
      throw classify(err, options.now());
    }
  }

  function fresh(ctx: PlatformContext): Promise<BlueskySession> {
    const key = keyOf(ctx);
    const pending = createSession(ctx);
    sessions.delete(key);
    sessions.set(key, pending);
    pending.catch(() => {
      if (sessions.get(key) === pending) sessions.delete(key);
    });
    if (sessions.size > maxSessions) sessions.delete(sessions.keys().next().value!);
    return pending;
  }

  function current(ctx: PlatformContext): Promise<BlueskySession> {
    return sessions.get(keyOf(ctx)) ?? fresh(ctx);
  }

  async function runRaw<T>(ctx: PlatformContext, op: (session: BlueskySession) => Promise<T>): Promise<T> {
    const session = await current(ctx);
    try {
      return await op(session);
    } catch (err) {
      if (!isSessionError(err)) throw err;
    }
    // The library already tried a refresh on ExpiredToken; try one for InvalidToken too, then a new login.
    let refreshed = false;
    if (session.agent.session) {
      try {
        await session.agent.sessionManager.refreshSession();
        refreshed = true;
      } catch (err) {
        if (transportCause(err)) throw err;
      }
    }
    if (refreshed) {
      try {
        return await op(session);
      } catch (err) {
        if (!isSessionError(err)) throw err;
      }
    }
    return op(await fresh(ctx));
  }

  return {
    login: fresh,
    runRaw,
    async run(ctx, op) {
      try {
        return await runRaw(ctx, op);
      } catch (err) {
        throw classify(err, options.now());
      }
    },
  };
}
