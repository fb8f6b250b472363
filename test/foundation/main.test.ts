import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request } from '../helpers/api';

const mainPath = path.join(__dirname, '../../src/main.js');
const cliPath = path.join(__dirname, '../../src/cli/main.js');

/**
 * `npm start` with no database or Temporal configured: embedded PostgreSQL under HERALD_DATA_DIR, the embedded
 * Temporal dev server, the worker and the API, all ready; SIGTERM stops everything and exits 0.
 */
describe('npm start (src/main.js)', function () {
  this.timeout(180_000);
  let dataDir: string;
  let child: ChildProcessWithoutNullStreams | undefined;
  const lines: Array<Record<string, unknown>> = [];

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'herald-main-'));
    await chmod(dataDir, 0o755);
  });
  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('starts with no configuration, is ready, serves a CLI-made key, and stops cleanly on SIGTERM', async () => {
    // No Web UI: this test does not look at it, and its default port (8233) may be another `npm start`'s.
    const env = { PATH: process.env.PATH ?? '', HERALD_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', HERALD_WEB_UI: 'false' };
    child = spawn(process.execPath, [mainPath], { env, cwd: dataDir });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const url = await new Promise<string>((resolve, reject) => {
      let buffer = '';
      child!.stdout.on('data', (chunk) => {
        buffer += chunk;
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = JSON.parse(buffer.slice(0, newline));
          buffer = buffer.slice(newline + 1);
          lines.push(line);
          if (line.msg === 'herald listening') resolve(line.url as string);
        }
      });
      child!.on('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
    });

    const ready = await request(url, 'GET', '/readyz');
    assert.equal(ready.status, 200, ready.text);
    assert.deepEqual(ready.body, { status: 'ok', checks: { database: 'ok', temporal: 'ok', worker: 'ok' } });

    // The operator command joins the running embedded cluster.
    const cli = spawnSync(process.execPath, [cliPath, 'users', 'create', '--plan', 'free'], { env: { ...env, LOG_LEVEL: 'warn' }, cwd: dataDir, encoding: 'utf8' });
    assert.equal(cli.status, 0, cli.stderr);
    const { api_key } = JSON.parse(cli.stdout);
    const listed = await request(url, 'GET', '/api/v1/posts', { key: api_key });
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body, { data: [] });
    assert.equal(listed.headers.get('x-ratelimit-limit'), '120');
    assert.equal(listed.headers.get('x-ratelimit-remaining'), '119');

    const exitCode = await new Promise<number | null>((resolve) => {
      child!.removeAllListeners('exit');
      child!.on('exit', (code) => resolve(code));
      child!.kill('SIGTERM');
    });
    assert.equal(exitCode, 0, stderr);
    assert.ok(lines.some((line) => line.msg === 'stopped'));
    // A clean stop stops the cluster it started: that is no failure to report.
    assert.deepEqual(lines.filter((line) => line.level === 'error').map((line) => line.msg), []);
    const servers = spawnSync('pgrep', ['-f', `-D ${path.join(dataDir, 'postgres')}`], { encoding: 'utf8' });
    assert.equal(servers.stdout, '', 'embedded postgres stopped');
  });

  it('stops with exit code 1 when the embedded PostgreSQL it started dies (kill -9, the OOM killer)', async () => {
    const env = { PATH: process.env.PATH ?? '', HERALD_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', HERALD_WEB_UI: 'false' };
    child = spawn(process.execPath, [mainPath], { env, cwd: dataDir });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const messages: string[] = [];
    // 'close', not 'exit': the last log lines are read by then.
    const exited = new Promise<number | null>((resolve) => child!.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      let buffer = '';
      child!.stdout.on('data', (chunk) => {
        buffer += chunk;
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = JSON.parse(buffer.slice(0, newline)) as { msg: string };
          buffer = buffer.slice(newline + 1);
          messages.push(line.msg);
          if (line.msg === 'herald listening') resolve();
        }
      });
      void exited.then((code) => reject(new Error(`exited with ${code}: ${stderr}`)));
    });
    const postmaster = Number((await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(postmaster, 'SIGKILL');
    const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(resolve, 20_000, 'still running').unref())]);
    assert.equal(code, 1, `${messages.join(', ')} ${stderr}`);
    assert.ok(messages.some((msg) => msg.startsWith('the embedded PostgreSQL exited')), messages.join(', '));
    const servers = spawnSync('pgrep', ['-f', `-D ${path.join(dataDir, 'postgres')}`], { encoding: 'utf8' });
    assert.equal(servers.stdout, '', 'no postgres process left');
  });

  it('says why a start failed on stderr too, not only in the JSON log', async () => {
    const env = { PATH: process.env.PATH ?? '', HERALD_DATA_DIR: dataDir, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', LOG_LEVEL: 'info', HERALD_WEB_UI: 'false' };
    const failed = spawnSync(process.execPath, [mainPath], { env, cwd: dataDir, encoding: 'utf8' });
    assert.equal(failed.status, 1);
    assert.match(failed.stderr, /^herald failed to start: .*ECONNREFUSED/m);
  });
});
