// Bytes of temporal-dev's heap per waiting run (issue 15): a focused micro-bench for "a waiting workflow's state
// kept compact". Makes RUNS waiting runs shaped like Herald's scheduled posts through temporal-dev's engine in this
// process (temporal-dev/test/waiting-runs.ts: no worker, no gRPC), then full GCs and the heap used per run. The
// runs' first workflow task timeouts are cancelled but still in the scheduler's heap (no time passes here; in a
// real process they leave it after 10 s), so this slightly overstates a run that has waited a while.
// Run with --expose-gc: node --expose-gc <out>/bench/temporal-dev-waiting.js [runs=5000]
import { bytesPerWaitingRun } from '../temporal-dev/test/waiting-runs';

const RUNS = Number(process.argv[2] ?? 5000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const { bytes, arrayBufferBytes, engine } = bytesPerWaitingRun(RUNS, gc);
const ns = engine.ns('default');
const waiting = [...ns.runs.values()].filter((run) => run.open && run.timers.length === 1 && !run.wft).length;
console.log(`${RUNS} runs, ${waiting} of ${ns.runs.size} waiting on a timer with no task`);
console.log(`temporal-dev heap (V8 used + ArrayBuffers) per waiting run: ${bytes.toFixed(0)} bytes, of which ArrayBuffers ${arrayBufferBytes.toFixed(0)}`);
engine.close();
