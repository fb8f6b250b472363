import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { access, chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../../src/logger';
import { startHerald } from '../../src/main';
import { testConfig } from '../helpers/api';
import { testDatabase } from '../helpers/db';

const mainPath = path.join(__dirname, '../../src/main.js');

/**
 * `npm start` stopped while it is still starting (a Ctrl-C during the first start's initdb and migrations): what has
 * started is stopped, the embedded PostgreSQL above all, and a second signal while it stops does not kill it.
 */
describe('npm start stopped during start-up', function () {
  this.timeout(120_000);
  let dataDir: string;
  let child: ChildProcessWithoutNullStreams | undefined;
  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'herald-startup-signal-'));
    await chmod(dataDir, 0o755);
  });
  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    // Whatever the outcome, no server of this test is left behind.
    const pidFile = await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').catch(() => undefined);
    if (pidFile) {
      process.kill(Number(pidFile.split('\n')[0]), 'SIGINT');
      await sleep(1_000);
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('stops the embedded PostgreSQL it started, exits 0, and ignores a second signal', async () => {
    const env = { PATH: process.env.PATH ?? '', HERALD_DATA_DIR: dataDir, PORT: '0', HERALD_WEB_UI: 'false', LOG_LEVEL: 'info' };
    child = spawn(process.execPath, [mainPath], { env, cwd: dataDir });
    const messages: string[] = [];
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child!.on('exit', (code, signal) => resolve({ code, signal })));
    await new Promise<void>((resolve, reject) => {
      let buffer = '';
      child!.stdout.on('data', (chunk) => {
        buffer += chunk;
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = JSON.parse(buffer.slice(0, newline)) as { msg: string };
          buffer = buffer.slice(newline + 1);
          messages.push(line.msg);
          if (line.msg === 'embedded postgres started') resolve();
        }
      });
      void exited.then(({ code }) => reject(new Error(`exited with ${code}: ${stderr}`)));
    });

    child.kill('SIGTERM');
    await sleep(50);
    child.kill('SIGINT');
    assert.deepEqual(await exited, { code: 0, signal: null }, stderr);
    assert.ok(messages.includes('stopped during start-up'), messages.join(', '));
    assert.ok(messages.includes('already stopping; signal ignored'), messages.join(', '));
    assert.ok(!messages.includes('herald listening'));
    await assert.rejects(access(path.join(dataDir, 'postgres', 'postmaster.pid')), { code: 'ENOENT' });
    const servers = spawnSync('pgrep', ['-f', `-D ${path.join(dataDir, 'postgres')}`], { encoding: 'utf8' });
    assert.equal(servers.stdout, '', 'embedded postgres stopped');
  });
});

/**
 * A signal after the last step's check (while the API binds its port) aborts the start as one earlier does: had the
 * start returned, `npm start` would have a running Herald that no one stops, and exit 1 at the shutdown timeout.
 */
describe('a signal during the last start-up step', function () {
  this.timeout(120_000);

  it('ends the start and undoes it, the listener with the rest', async () => {
    const database = await testDatabase();
    const starting = new AbortController();
    let url: string | undefined;
    // The signal arrives as the API starts listening (the log line of that step is the hook).
    const destination = {
      write(line: string) {
        const entry = JSON.parse(line) as { msg: string; url?: string };
        if (entry.msg !== 'herald listening') return;
        url = entry.url;
        starting.abort(new Error('SIGTERM during start-up'));
      },
    };
    await assert.rejects(
      startHerald(testConfig({ DATABASE_URL: database.url, PORT: '0', HOST: '127.0.0.1' }), createLogger('info', destination), { signal: starting.signal }),
      { message: 'SIGTERM during start-up' },
    );
    assert.ok(url);
    await assert.rejects(fetch(`${url}/healthz`), { name: 'TypeError', message: 'fetch failed' });
  });
});
