// Bytes of temporal-dev's heap per waiting run (issue 15): a focused micro-bench for "a waiting workflow's state
// kept compact". Makes RUNS waiting runs shaped like Herald's scheduled posts through temporal-dev's engine in this
// process (temporal-dev/test/waiting-runs.ts: no worker, no gRPC), then full GCs and the heap used per run. The
// runs' first workflow task timeouts are cancelled but still in the scheduler's heap (no time passes here; in a
// real process they leave it after 10 s), so this slightly overstates a run that has waited a while.
// Run with --expose-gc: node --expose-gc <out>/bench/temporal-dev-waiting.js [runs=5000] [--finished-first] [--dictionary]
//   --finished-first: an immediate-like publishPost run that finished at once is deflated first (without a given
//     dictionary it becomes its type's, as in a process whose first publishPost was an immediate post);
//   --dictionary: publishPost's dictionary is given, as Herald gives its recorded ones (`src/temporal/history-
//     dictionaries.ts`), made here the same way from this bench's own shapes (a finished run's history, then a
//     waiting one's), so it fits them as Herald's recorded ones fit real histories.
import { Engine } from '../temporal-dev/engine';
import { useHistoryDictionary } from '../temporal-dev/history-storage';
import { encode } from '../temporal-dev/proto';
import { bytesPerWaitingRun, finishedRun, waitingRun } from '../temporal-dev/test/waiting-runs';

const args = process.argv.slice(2);
const RUNS = Number(args.find((arg) => !arg.startsWith('--')) ?? 5000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

if (args.includes('--dictionary')) {
  const scratch = new Engine({ timeSkipping: false, namespace: 'default' });
  finishedRun(scratch);
  waitingRun(scratch);
  const histories = [...scratch.ns('default').runs.values()].map((run) => Buffer.concat(run.events.map((event) => encode('temporal.api.history.v1.HistoryEvent', event))));
  useHistoryDictionary('publishPost', Buffer.concat(histories));
  scratch.close();
}
const { bytes, arrayBufferBytes, engine } = bytesPerWaitingRun(RUNS, gc, { finishedFirst: args.includes('--finished-first') });
const ns = engine.ns('default');
const waitingRuns = [...ns.runs.values()].filter((run) => run.open && run.timers.length === 1 && !run.wft);
const deflated = waitingRuns.reduce((total, run) => total + (run as unknown as { history: string }).history.length, 0) / waitingRuns.length;
console.log(`${RUNS} runs, ${waitingRuns.length} of ${ns.runs.size} waiting on a timer with no task; a waiting run's history deflated: ${deflated.toFixed(0)} bytes`);
console.log(`temporal-dev heap (V8 used + ArrayBuffers) per waiting run: ${bytes.toFixed(0)} bytes, of which ArrayBuffers ${arrayBufferBytes.toFixed(0)}`);
engine.close();
