import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

/** A free TCP port on the loopback interface (bound then released). */
export async function freePort(): Promise<number> {
  return await new Promise((done) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => done(port));
    });
  });
}

/**
 * temporal-dev (real-clock mode) in a child process of its own, so that its CPU and memory can be read from /proc;
 * resolves once it listens. `execArgv`: node flags for it (e.g. `--cpu-prof`).
 */
export async function startTemporalDev(port: number, execArgv: string[] = []): Promise<ChildProcess> {
  const main = path.resolve(__dirname, '..', 'temporal-dev', 'main.js');
  const child = spawn(process.execPath, [...execArgv, main, '--port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((ready, fail) => {
    child.stderr!.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && ready());
    child.once('exit', (code) => fail(new Error(`temporal-dev exited with ${code}`)));
  });
  return child;
}
