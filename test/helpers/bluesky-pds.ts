/**
 * A real Bluesky PDS on this machine, offline, from `@atproto/dev-env` (protocols.md sections 10 and 11).
 *
 *   startBlueskyPds({ appView }): Promise<BlueskyPds>
 *     appView false (mode A, `TestNetworkNoAppView`): PLC + PDS with SQLite and a disk blobstore. Publish, reply,
 *       delete, images and getRecord work; `app.bsky.*` reads answer 502 UpstreamFailure.
 *     appView true (mode B, `TestNetwork`): PLC + PDS + the bsky AppView + Ozone, so getPostThread works. The AppView
 *       needs PostgreSQL: a throwaway embedded cluster is started here (src/db/embedded.ts) and stopped by close().
 *       Everything dev-env writes to disk lives in one scratch folder that close() removes.
 *       dev-env also asserts that REDIS_HOST is set, though nothing connects to it in tests.
 *   BlueskyPds: { url, createAccount(handle), processAll(), close() }
 *     createAccount makes an account with a real app password (`xxxx-xxxx-xxxx-xxxx`) as a user would.
 *     processAll waits until the AppView has indexed every write (mode B; a no-op wait in mode A).
 */
import { mkdtemp, rm, chmod } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AtpAgent } from '@atproto/api';
import type { TestNetwork, TestNetworkNoAppView } from '@atproto/dev-env';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedCluster } from '../../src/db/embedded';

export interface BlueskyPdsAccount {
  did: string;
  handle: string;
  appPassword: string;
  /** A logged-in client of the account (main password), for acting as that user outside Herald. */
  agent: AtpAgent;
}

export interface BlueskyPds {
  url: string;
  appView: boolean;
  createAccount(handle: string): Promise<BlueskyPdsAccount>;
  processAll(): Promise<void>;
  close(): Promise<void>;
}

export async function startBlueskyPds(options: { appView: boolean }): Promise<BlueskyPds> {
  // Loaded here, not at the top: dev-env is large and only the PDS tests need it.
  const devEnv = await import('@atproto/dev-env');
  // dev-env puts each PDS's SQLite files and blobs (and the AppView its image cache) under os.tmpdir() and never
  // removes them: point TMPDIR at a scratch folder while the network starts, and delete the folder on close.
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'herald-bsky-'));
  // The embedded PostgreSQL server runs as the `postgres` user when tests run as root; it must reach its folder.
  await chmod(scratch, 0o755);
  const previousTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = scratch;
  let network: TestNetwork | TestNetworkNoAppView;
  let cluster: EmbeddedCluster | undefined;
  const cleanUp = async () => {
    await cluster?.stop();
    await rm(scratch, { recursive: true, force: true });
  };
  try {
    if (options.appView) {
      cluster = await startEmbeddedPostgres({ dataDir: path.join(scratch, 'postgres') });
      await ensureDatabase(cluster.url('postgres'), 'bsky');
      // dev-env asserts the variable exists; the AppView runs without Redis in tests.
      process.env.REDIS_HOST ??= '127.0.0.1:6379';
      network = await devEnv.TestNetwork.create({ dbPostgresUrl: cluster.url('bsky'), dbPostgresSchema: 'herald' });
    } else {
      network = await devEnv.TestNetworkNoAppView.create({});
    }
  } catch (err) {
    await cleanUp().catch(() => undefined);
    throw err;
  } finally {
    if (previousTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmpdir;
  }

  const url = network.pds.url;
  let accounts = 0;

  return {
    url,
    appView: options.appView,
    async createAccount(handle) {
      const agent = new AtpAgent({ service: url });
      accounts += 1;
      const password = `main-password-${accounts}`;
      await agent.createAccount({ handle, email: `${handle.split('.')[0]}@herald.test`, password });
      const created = await agent.com.atproto.server.createAppPassword({ name: `herald-${accounts}` });
      return { did: agent.session!.did, handle, appPassword: created.data.password, agent };
    },
    async processAll() {
      await network.processAll();
    },
    async close() {
      try {
        await network.close();
      } finally {
        await cleanUp();
      }
    },
  };
}
