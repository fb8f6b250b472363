// CPU time of processes from /proc, for the benches that print CPU seconds per process (reads, burst).
import { readdirSync, readFileSync } from 'node:fs';

const ticksPerSecond = 100; // USER_HZ on Linux

/** utime+stime of a process in ms; with `children`, also the CPU of the children it reaped (cutime+cstime). */
export function cpuMs(pid: number, children = false): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // After "pid (comm) ": state is field 0, utime 11, stime 12, cutime 13, cstime 14.
    const ticks = Number(fields[11]) + Number(fields[12]) + (children ? Number(fields[13]) + Number(fields[14]) : 0);
    return (ticks * 1000) / ticksPerSecond;
  } catch {
    return 0; // exited
  }
}

/** PostgreSQL's whole CPU: the postmaster with what it reaped, plus every live child (backends, walwriter...). */
export function postgresCpuMs(postmasterPid: number): number {
  let total = cpuMs(postmasterPid, true);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = safeRead(`/proc/${name}/stat`);
    // After "pid (comm) ": the parent pid is field 1.
    if (stat && Number(stat.split(') ')[1]!.split(' ')[1]) === postmasterPid) total += cpuMs(Number(name));
  }
  return total;
}

function safeRead(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
