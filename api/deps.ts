import type { Client } from '@temporalio/client';
import type pg from 'pg';
import type { Config } from '../src/config';
import type { Db } from '../src/db';
import type { Logger } from '../src/logger';

/** A named readiness check for `GET /readyz`; resolves when the dependency answers, rejects otherwise. */
export interface ReadinessProbe {
  name: string;
  check(): Promise<void>;
}

/**
 * Everything the HTTP layer needs, built once by `src/main.ts` (or a test) and passed to `createApp`.
 * Features that need more (adapters, a media store...) add optional members here.
 */
export interface AppDeps {
  config: Config;
  db: Db;
  /** The pool under `db`; the burst limiter stores its counters through it. */
  pool: pg.Pool;
  logger: Logger;
  /** `GET /readyz` answers 200 only when every probe resolves. The database probe is always added. */
  probes?: ReadinessProbe[];
  /** Temporal client, for routes that start or signal workflows. */
  temporal?: Client;
  /** The authentication cache's bound and clock (src/auth/key-cache.ts); tests shorten or move them. */
  keyCache?: import('../src/auth/key-cache').KeyCacheOptions;
  /** Tuning of the Idempotency-Key protocol (tests shorten the waits). */
  idempotency?: import('./idempotency').IdempotencyOptions;
  /** The eight platform adapters (`createPlatformAdapters`); connecting an account verifies with them. */
  adapters?: import('../src/platforms/registry').PlatformAdapters;
  /** Seals platform credentials at rest; when absent, one is built from `config.encryptionKey`. */
  sealedBox?: import('../src/crypto/sealed-box').SealedBox;
  /** Cancels an account's scheduled posts when it is deactivated or disconnected (implemented by the posts feature). */
  accountLifecycle?: import('../src/accounts/lifecycle').AccountLifecycle;
  /** Starts an account's credential workflow once a renewable credential is stored (decisions.md "Keeping credentials alive"). */
  credentialKeeper?: import('../src/accounts/credential-workflow-client').CredentialKeeper;
  /** Posts: task queue, retry waits, clock... (tests); the rest comes from the members above and `config`. */
  posts?: import('../src/posts/runtime').PostsRuntimeOverrides;
}
