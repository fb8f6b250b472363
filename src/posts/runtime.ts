import type { Client } from '@temporalio/client';
import { defaultSendLimits, type SendLimits } from '../platforms/send-stop';
import type { Kysely } from 'kysely';
import type { MediaTables } from '../db/tables/media';
import type { Config } from '../config';
import { createSealedBox, type SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { createMediaStore, createMediaUrlSigner, deriveMediaUrlKey, type MediaStore, type MediaUrlSigner } from '../media';
import { createHttpClient, type HttpClient } from '../net/http';
import { createPlatformAdapters, type PlatformAdapters } from '../platforms/registry';
import type { AccountLifecycle } from '../accounts/lifecycle';
import { keepingCredentialsAlive } from '../accounts/credential-keeping-adapters';
import { createCredentialRenewers } from '../platforms/renewal/registry';
import type { CredentialRenewers } from '../platforms/renewal/types';
import { cancelScheduledPosts } from './cancel-scheduled';
import type { PostChangeFeed } from './change-feed';
import { CreationReads } from './creation-reads';
import { InstantGate } from './instant-gate';
import { RecentlyRunning } from './recently-running';

/**
 * Everything the posts service (API side) and the post activities (worker side) share, built once per process from
 * configuration. Tests override parts: their own task queue, adapters with a fast `sleep`, a clock.
 */
export interface PostsRuntime {
  config: Config;
  db: Db;
  logger: Logger;
  /** Absent in processes that never start workflows (the worker alone). */
  temporal?: Client;
  /** API side: tells a waiting immediate publish that its row settled, ahead of the workflow's result. */
  changes?: PostChangeFeed;
  /** API side: the accounts and limits this process's creates read last, per user (no read before most creates). */
  creationReads?: CreationReads;
  /** The workflows this process started in the last minutes, which the periodic reconcile need not look at. */
  recentlyRunning?: RecentlyRunning;
  /** Task queue the post workflows run on (`herald`). */
  taskQueue: string;
  /** The adapters, renewing an ended credential on demand and retrying the call once (`keepingCredentialsAlive`). */
  adapters: PlatformAdapters;
  /** Token renewal per platform whose credentials expire (decisions.md "Keeping credentials alive"). */
  renewers: CredentialRenewers;
  /** Waits between attempts at a transiently failing renewal inside one platform call (tests shorten them). */
  renewalPatienceMs?: readonly number[];
  http: HttpClient;
  mediaStore: MediaStore;
  sealedBox: SealedBox;
  mediaUrls: MediaUrlSigner;
  now(): Date;
  /** Retry waits of a failing scheduled post (ms), one per retry; default 1, 5 and 15 minutes. */
  scheduledRetryDelaysMs: readonly number[];
  /** Quick retries of an immediate post's transient failure (ms), inside the request; default 1 s and 3 s. */
  immediateRetryDelaysMs: readonly number[];
  /** How long before its time a scheduled post's workflow wakes to hold it in the worker (ms); default `config.dueLeadMs`. */
  dueLeadMs: number;
  /** The scheduled posts and threads held in this worker, by instant: they wake together and report once all have sent. */
  heldInstants: InstantGate;
  /** How long before an activity's time limit its creates stop beginning (`src/platforms/send-stop.ts`; tests shorten it). */
  sendLimits: SendLimits;
}

export type PostsRuntimeOverrides = Partial<Omit<PostsRuntime, 'config' | 'db' | 'logger'>>;

export const POSTS_TASK_QUEUE = 'herald';
const SCHEDULED_RETRY_DELAYS_MS = [60_000, 5 * 60_000, 15 * 60_000] as const;
const IMMEDIATE_RETRY_DELAYS_MS = [1_000, 3_000] as const;

export function createPostsRuntime(base: { config: Config; db: Db; logger: Logger; temporal?: Client }, overrides: PostsRuntimeOverrides = {}): PostsRuntime {
  const { config } = base;
  if (!config.encryptionKey) throw new Error('HERALD_ENCRYPTION_KEY is required to publish posts');
  const http = overrides.http ?? createHttpClient({ allowInsecure: config.allowInsecureUrls });
  const sealedBox = overrides.sealedBox ?? createSealedBox(config.encryptionKey);
  const now = overrides.now ?? (() => new Date());
  const renewers = overrides.renewers ?? createCredentialRenewers({ http, platformUrls: config.platformUrls, apps: config.credentialApps });
  const adapters =
    overrides.adapters ?? createPlatformAdapters({ http, platformUrls: config.platformUrls, allowInsecureUrls: config.allowInsecureUrls });
  // A renewal refused during any platform call (a publish, a delete, a comment) loses the connection: the account's
  // scheduled posts are cancelled with `connection_lost` then and there, whoever made the call, their downloaded media
  // copies removed. No workflow is signalled, as the activities do it: the cancelled posts' workflows end at their next read.
  const lifecycle: AccountLifecycle = { accountDeactivated: (accountId, reason) => cancelScheduledPosts(runtime, { accountId, reason }).then(() => undefined) };
  const runtime: PostsRuntime = {
    ...base,
    temporal: overrides.temporal ?? base.temporal,
    changes: overrides.changes,
    creationReads: overrides.creationReads ?? new CreationReads(),
    recentlyRunning: overrides.recentlyRunning ?? new RecentlyRunning(),
    taskQueue: overrides.taskQueue ?? POSTS_TASK_QUEUE,
    http,
    adapters: keepingCredentialsAlive(adapters, { db: base.db, sealedBox, renewers, logger: base.logger, lifecycle, now, patienceMs: overrides.renewalPatienceMs }),
    renewers,
    renewalPatienceMs: overrides.renewalPatienceMs,
    mediaStore: overrides.mediaStore ?? createMediaStore(base.db as unknown as Kysely<MediaTables>),
    sealedBox,
    mediaUrls: overrides.mediaUrls ?? createMediaUrlSigner({ publicBaseUrl: config.publicUrl, key: deriveMediaUrlKey(config.encryptionKey) }),
    now,
    scheduledRetryDelaysMs: overrides.scheduledRetryDelaysMs ?? SCHEDULED_RETRY_DELAYS_MS,
    immediateRetryDelaysMs: overrides.immediateRetryDelaysMs ?? IMMEDIATE_RETRY_DELAYS_MS,
    dueLeadMs: overrides.dueLeadMs ?? config.dueLeadMs,
    heldInstants: overrides.heldInstants ?? new InstantGate(),
    sendLimits: overrides.sendLimits ?? defaultSendLimits,
  };
  return runtime;
}
