import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { type Connected, connectDatabase } from '../../src/db/connect';
import { testConfig } from '../helpers/api';

/**
 * One embedded cluster per data dir, shared by `npm start` and `herald` commands: whichever process started it, the
 * last one to leave stops it. A command that started the cluster and ends while a server that joined it is still
 * connected leaves it running for that server, which stops it at its own shutdown.
 */
describe('embedded PostgreSQL shared between processes', function () {
  this.timeout(90_000);
  let dataDir: string;
  const opened: Connected[] = [];
  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'herald-shared-pg-'));
    await chmod(dataDir, 0o755);
  });
  after(async () => {
    for (const connected of opened) await connected.close().catch(() => undefined);
    for (const connected of opened) await connected.embedded?.stop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  });

  const postmasterPid = async () => Number((await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it('the starter leaves the cluster running while another process is connected; the last to leave stops it', async () => {
    const config = testConfig({ HERALD_DATA_DIR: dataDir });
    const command = await connectDatabase(config, { migrate: false, poolSize: 1 });
    opened.push(command);
    assert.equal(command.embedded?.owned, true);
    const server = await connectDatabase(config, { migrate: false, poolSize: 1 });
    opened.push(server);
    assert.equal(server.embedded?.owned, false);
    await sql`select 1`.execute(server.handle.db);
    const pid = await postmasterPid();

    await command.close();
    const { rows } = await sql<{ answer: number }>`select 42 as answer`.execute(server.handle.db);
    assert.deepEqual(rows, [{ answer: 42 }], 'the server that joined still has its database');

    let watchedAfterLeaving = false;
    void server.embedded!.exited.then(() => (watchedAfterLeaving = true));
    await server.close();
    assert.equal(alive(pid), false, 'the last process to leave stopped the cluster');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(watchedAfterLeaving, false, 'a process that left stops watching: its own stop is no failure');
  });

  it('runs the server in a process group of its own: a Ctrl-C to the starter\'s group does not reach it', async () => {
    const config = testConfig({ HERALD_DATA_DIR: dataDir });
    const command = await connectDatabase(config, { migrate: false, poolSize: 1 });
    opened.push(command);
    const pid = await postmasterPid();
    const groupOf = (of: number) => execFileSync('ps', ['-o', 'pgid=', '-p', String(of)], { encoding: 'utf8' }).trim();
    assert.notEqual(groupOf(pid), groupOf(process.pid));
    await command.close();
    assert.equal(alive(pid), false, 'alone, the starter stops it when done');
  });

  it('a cluster no other process shares (tests, benches) is stopped when the process that started it exits without stopping it', async () => {
    const own = path.join(dataDir, 'private');
    const script = `require(${JSON.stringify(require.resolve('../../src/db/embedded'))}).startEmbeddedPostgres({ dataDir: ${JSON.stringify(own)} }).then(() => process.exit(0))`;
    const started = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(started.status, 0, started.stderr);
    for (const deadline = Date.now() + 10_000; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
      const pidFile = await readFile(path.join(own, 'postgres', 'postmaster.pid'), 'utf8').catch(() => undefined);
      if (pidFile === undefined) break;
      if (Date.now() > deadline) {
        process.kill(Number(pidFile.split('\n')[0]), 'SIGINT');
        assert.fail('the server outlived the process that started it');
      }
    }
  });

  it('a process that joined the cluster hears of its death as the one that started it does (`exited`)', async () => {
    const config = testConfig({ HERALD_DATA_DIR: dataDir });
    const command = await connectDatabase(config, { migrate: false, poolSize: 1 });
    opened.push(command);
    const server = await connectDatabase(config, { migrate: false, poolSize: 1 });
    opened.push(server);
    assert.equal(server.embedded?.owned, false);
    const pid = await postmasterPid();
    const heard = (of: Connected) => Promise.race([of.embedded!.exited, new Promise<string>((resolve) => setTimeout(() => resolve('not heard'), 5_000))]);
    // Before 2026-12-07 a joined cluster had no `exited`: Herald answered 500 for ever after its death.
    process.kill(pid, 'SIGKILL');
    const [joined, started] = await Promise.all([heard(server), heard(command)]);
    assert.match(joined, new RegExp(`pid ${pid}.* is gone`));
    assert.match(started, /killed by SIGKILL/);
  });
});
