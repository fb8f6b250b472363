import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of processes from /proc (Linux), for the benches that put each side in its own process. Same reading as
 * bench/reads.ts: utime+stime in clock ticks (USER_HZ = 100), so a figure is good to 10 ms per process.
 */

const ticksPerSecond = 100;

/** The fields after "pid (comm) ": state is 0, the parent pid 1, utime 11, stime 12, cutime 13, cstime 14, starttime 19. */
function statFields(file: string): string[] | null {
  try {
    return readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
  } catch {
    return null; // exited
  }
}

/** utime+stime of a process in ms; with `children`, also the CPU of the children it reaped (cutime+cstime). */
export function cpuMs(pid: number, children = false): number {
  const fields = statFields(`/proc/${pid}/stat`);
  if (!fields) return 0;
  const ticks = Number(fields[11]) + Number(fields[12]) + (children ? Number(fields[13]) + Number(fields[14]) : 0);
  return (ticks * 1000) / ticksPerSecond;
}

/** PostgreSQL's whole CPU: the postmaster with what it reaped, plus every live child (backends, walwriter...). */
export function postgresCpuMs(postmasterPid: number): number {
  let total = cpuMs(postmasterPid, true);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(`/proc/${name}/stat`);
    if (fields && Number(fields[1]) === postmasterPid) total += cpuMs(Number(name));
  }
  return total;
}

/**
 * V8's platform threads start with the process; libuv's pool starts at its first use and a worker thread when it is
 * made, seconds later in a process that loads modules first. Ticks of /proc's `starttime`.
 */
const startedWithProcessTicks = 50;

/**
 * A process's CPU by thread (ms). Node names its main thread, V8's platform workers (concurrent and parallel GC,
 * background compilation), libuv's pool and every worker thread (the SDK's JS workflow thread among them) all `node`;
 * here the main thread (tid = pid) is `main`, the `node` threads that started with it are `v8_helpers`, and those that
 * started later are `later_node_threads` (libuv's pool and the worker threads: in a Herald process under load, almost
 * all of it the JS workflow thread, the pool being idle). sdk-core's threads have names of their own:
 * `tokio-runtime-w` (its gRPC and polling), `workflow-proces` (its Rust workflow state machines, not the JS workflow
 * thread).
 */
export function cpuMsByThread(pid: number): Record<string, number> {
  const byName: Record<string, number> = {};
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  const processStart = Number(statFields(`/proc/${pid}/stat`)?.[19] ?? 0);
  for (const tid of tids) {
    let name: string;
    try {
      name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    const fields = statFields(`/proc/${pid}/task/${tid}/stat`);
    if (!fields) continue;
    if (tid === String(pid)) name = 'main';
    else if (name === 'node') name = Number(fields[19]) - processStart <= startedWithProcessTicks ? 'v8_helpers' : 'later_node_threads';
    byName[name] = (byName[name] ?? 0) + ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  }
  return byName;
}

/**
 * The CPU (ms) each thread of `pid` spent since `before` (a `cpuMsByThread` reading), sorted, largest first. /proc
 * counts the CPU of threads that ended meanwhile (vm's watchdog threads, a pool's) in the process and in no thread it
 * lists: given the process's own delta, that remainder is `exited_threads`.
 */
export function threadCpuSince(pid: number, before: Record<string, number>, processDeltaMs: number): Array<[string, number]> {
  const live = Object.entries(cpuMsByThread(pid)).map(([name, ms]): [string, number] => [name, ms - (before[name] ?? 0)]);
  const exited = processDeltaMs - live.reduce((sum, [, ms]) => sum + ms, 0);
  return [...live, ['exited_threads', Math.max(0, exited)] as [string, number]].sort((a, b) => b[1] - a[1]);
}
