import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';

/** src/logger.ts createStdoutLogger: buffered stdout that still delivers every line, promptly and on exit. */
describe('stdout logger', () => {
  const loggerModule = require.resolve('../../src/logger');

  function run(script: string) {
    const child = spawn(process.execPath, ['-e', `const logger = require(${JSON.stringify(loggerModule)}).createStdoutLogger('info');\n${script}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: Array<{ msg: string }> = [];
    const firstLine = new Promise<boolean>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        lines.push(...chunk.toString().split('\n').filter(Boolean).map((line) => JSON.parse(line)));
        resolve(child.exitCode === null);
      });
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return { child, lines, firstLine, exited };
  }

  it('writes a line while the process keeps running, without waiting for more', async () => {
    const child = run(`logger.info('alone'); setTimeout(() => process.exit(0), 20000);`);
    assert.equal(await child.firstLine, true, 'the line arrived before the process exited');
    assert.deepEqual(child.lines.map((l) => l.msg), ['alone']);
    child.child.kill('SIGKILL');
    await child.exited;
  });

  it('flushes every buffered line when the process exits or crashes', async () => {
    const exits = run(`for (let i = 0; i < 500; i++) logger.info('line ' + i); process.exit(3);`);
    assert.equal(await exits.exited, 3);
    assert.equal(exits.lines.length, 500);
    const crashes = run(`logger.error('before the crash'); setImmediate(() => { throw new Error('boom'); });`);
    assert.equal(await crashes.exited, 1);
    assert.deepEqual(crashes.lines.map((l) => l.msg), ['before the crash']);
  });
});
