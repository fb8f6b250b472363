// Benchmark of temporal-dev (real-clock mode) driven by the real SDK worker and client:
//  1. throughput and start-to-result latency of one-activity workflows, with the server's share of CPU;
//  2. resident memory of the server with 10,000 open workflows each waiting on a timer.
// The server runs in a child process so its CPU time and RSS can be read from /proc.
// Usage: node <out>/bench/temporal.js [workflows=1000] [concurrency=100] [open=10000]
import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { percentile } from './percentile';
import { freePort, startTemporalDev } from './temporal-dev-process';

const CLOCK_TICKS_PER_SECOND = 100; // Linux USER_HZ
const [WORKFLOWS = 1000, CONCURRENCY = 100, OPEN = 10_000] = process.argv.slice(2).map(Number);

interface ProcStats {
  cpuMs: number;
  rssBytes: number;
}

function procStats(pid: number): ProcStats {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return { cpuMs: (ticks * 1000) / CLOCK_TICKS_PER_SECOND, rssBytes: rssKb * 1024 };
}

function selfCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

async function pool<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const port = await freePort();
  const server = await startTemporalDev(port);
  const address = `127.0.0.1:${port}`;
  const rows: Array<[string, string]> = [];
  try {
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../temporal-dev/test/workflows'),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
    const nativeConnection = await NativeConnection.connect({ address });
    const connection = await Connection.connect({ address });
    const client = new Client({ connection });
    const activities = { greet: async (name: string) => `Hello, ${name}!` };
    const taskQueue = 'bench';
    const worker = await Worker.create({ connection: nativeConnection, taskQueue, workflowBundle, activities, maxCachedWorkflows: 2000 });

    await worker.runUntil(async () => {
      // Warm-up so that JIT and connection set-up do not count.
      await pool(50, 25, (i) => client.workflow.execute('greeting', { taskQueue, workflowId: `warm-${i}`, args: ['w'] }));

      // Latency without queueing: one workflow at a time.
      const serial = await pool(100, 1, async (i) => {
        const started = performance.now();
        await client.workflow.execute('greeting', { taskQueue, workflowId: `serial-${i}`, args: ['s'] });
        return performance.now() - started;
      });
      serial.sort((a, b) => a - b);
      rows.push(
        ['latency one at a time p50 / p99', `${percentile(serial, 50).toFixed(1)} ms / ${percentile(serial, 99).toFixed(1)} ms (100 workflows)`],
      );

      const server0 = procStats(server.pid!);
      const self0 = selfCpuMs();
      const t0 = Date.now();
      const latencies = await pool(WORKFLOWS, CONCURRENCY, async (i) => {
        const started = performance.now();
        await client.workflow.execute('greeting', { taskQueue, workflowId: `wf-${i}`, args: [String(i)] });
        return performance.now() - started;
      });
      const wallMs = Date.now() - t0;
      const serverCpu = procStats(server.pid!).cpuMs - server0.cpuMs;
      const selfCpu = selfCpuMs() - self0;
      latencies.sort((a, b) => a - b);
      rows.push(
        ['one-activity workflows completed', `${WORKFLOWS} (concurrency ${CONCURRENCY})`],
        ['throughput', `${((WORKFLOWS * 1000) / wallMs).toFixed(0)} workflows/s`],
        ['latency start→result p50 (under load)', `${percentile(latencies, 50).toFixed(1)} ms`],
        ['latency start→result p99 (under load)', `${percentile(latencies, 99).toFixed(1)} ms`],
        ['server CPU during the run', `${serverCpu.toFixed(0)} ms`],
        ['worker + client CPU during the run', `${selfCpu.toFixed(0)} ms`],
        ['server share of CPU at peak', `${((100 * serverCpu) / (serverCpu + selfCpu)).toFixed(1)} %`],
      );

      const before = procStats(server.pid!).rssBytes;
      const tOpen = Date.now();
      await pool(OPEN, 200, (i) => client.workflow.start('sleeper', { taskQueue, workflowId: `open-${i}`, args: [3_600_000] }));
      // Workflow tasks are handed out in order: once the last one started its timer, all of them have.
      for (;;) {
        const history = await client.workflow.getHandle(`open-${OPEN - 1}`).fetchHistory();
        if (history.events?.some((e) => e.timerStartedEventAttributes)) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const after = procStats(server.pid!).rssBytes;
      rows.push(
        ['open workflows waiting on a timer', `${OPEN} (started and parked in ${((Date.now() - tOpen) / 1000).toFixed(1)} s)`],
        ['server RSS before / after', `${(before / 2 ** 20).toFixed(0)} MiB / ${(after / 2 ** 20).toFixed(0)} MiB`],
        ['server memory per open workflow', `${((after - before) / OPEN / 1024).toFixed(1)} KiB`],
      );
    });
    await nativeConnection.close();
    await connection.close();
  } finally {
    server.kill('SIGTERM');
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log(`\ntemporal-dev benchmark (real-clock mode, server in a child process, ${new Date().toISOString()})`);
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
