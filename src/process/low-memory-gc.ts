import { Session } from 'node:inspector/promises';
import v8 from 'node:v8';

/**
 * V8's low-memory collection, through an in-process inspector session (no port is opened): `LowMemoryNotification`,
 * the collection V8 runs when the system is short of memory. Its full GCs run until nothing more is freed (so the
 * burst's dead ArrayBuffers are back in glibc's hands before the trim) and shrink the young generation, which a
 * forced `gc()` leaves at its largest (measured: 32 MiB of new space resident after one, 0.3 after this). On its own
 * it moves only some of old space's fragmented pages (a 401 MiB old space holding 228: 333 MiB after it), so when
 * what it left is still that fragmented (`COMPACT_SLACK_BYTES` resident above what is used), it runs once more with
 * `--compact-on-every-full-gc` on (232 MiB); the flag is put back once it is done. Not always: compacting holds the
 * main thread about twice as long or more (after a burst of 10,000 scheduled posts, 774–956 ms against 328–596), and
 * after Herald's own bursts the plain collection leaves old space about as small (bench:memory, 2026-11-28).
 *
 * Every worker thread gets the same collection, through the same session (`NodeWorker`): the worker's workflow
 * thread is an isolate of its own, which a burst grows as much as the main one (measured: 18 → 99 MiB committed while
 * 10,000 first workflow tasks ran, and still 6 MiB above idle two minutes later, holding 40 cached runs).
 */
export function lowMemoryGcFunction(): () => Promise<LowMemoryGcOutcome> {
  let session: Session | undefined;
  return async () => {
    if (!session) {
      session = new Session();
      session.connect();
    }
    const started = performance.now();
    await session.post('HeapProfiler.collectGarbage');
    const compacted = oldSpaceSlackBytes() >= COMPACT_SLACK_BYTES;
    v8.setFlagsFromString('--compact-on-every-full-gc');
    try {
      if (compacted) await session.post('HeapProfiler.collectGarbage');
      const mainDone = performance.now();
      // A worker's collection runs on its own thread (the main thread only waits for the answers): always compacting.
      await collectInWorkers(session);
      return { mainThreadMs: mainDone - started, workerThreadsMs: performance.now() - mainDone, compacted };
    } finally {
      v8.setFlagsFromString('--no-compact-on-every-full-gc');
    }
  };
}

/** Old space resident above what it uses, past which the main thread's collection compacts (see above). */
const COMPACT_SLACK_BYTES = 16 * 1024 * 1024;

function oldSpaceSlackBytes(): number {
  const old = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space');
  return old ? old.physical_space_size - old.space_used_size : 0;
}

/**
 * What a collection took and did: the main thread's part holds it (a request that arrives waits), the worker threads'
 * run on those threads while the main thread only waits for their answers.
 */
interface LowMemoryGcOutcome {
  mainThreadMs: number;
  workerThreadsMs: number;
  /** Whether the main thread's old space was compacted too. */
  compacted: boolean;
}

/** How long a worker thread may take to answer; a worker that does not is left as it is. */
const workerAnswerMs = 10_000;
/** The id of the one request each worker is sent, which its answer carries. */
const COLLECT_REQUEST_ID = 1;

/**
 * Attaches to every worker thread (the attachments are announced before `NodeWorker.enable` answers), runs the
 * collection in each, and detaches again: a worker is not kept attached to an inspector between releases.
 */
async function collectInWorkers(session: Session): Promise<void> {
  const workers: string[] = [];
  const attached = (message: { params: { sessionId: string } }) => workers.push(message.params.sessionId);
  const answers = new Map<string, () => void>();
  const received = (message: { params: { sessionId: string; message: string } }) => {
    if ((JSON.parse(message.params.message) as { id?: number }).id === COLLECT_REQUEST_ID) answers.get(message.params.sessionId)?.();
  };
  session.on('NodeWorker.attachedToWorker', attached);
  session.on('NodeWorker.receivedMessageFromWorker', received);
  try {
    await session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    for (const sessionId of workers) {
      let timeout: NodeJS.Timeout | undefined;
      const answered = new Promise<void>((resolve) => {
        answers.set(sessionId, resolve);
        timeout = setTimeout(resolve, workerAnswerMs);
      });
      await session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id: COLLECT_REQUEST_ID, method: 'HeapProfiler.collectGarbage' }) });
      await answered.finally(() => clearTimeout(timeout));
    }
  } finally {
    await session.post('NodeWorker.disable').catch(() => undefined);
    session.off('NodeWorker.attachedToWorker', attached);
    session.off('NodeWorker.receivedMessageFromWorker', received);
  }
}
