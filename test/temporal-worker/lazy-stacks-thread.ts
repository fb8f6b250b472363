import vm from 'node:vm';
import { parentPort } from 'node:worker_threads';
import { GlobalHandlers } from '@temporalio/worker/lib/workflow/vm-shared';
import { installLazyPromiseStacks } from '../../src/temporal/lazy-promise-stacks';

/**
 * Run in a thread of its own by `promise-stacks.test.ts` (a promise hook is the whole isolate's): the lazy hook's
 * install on a fresh `GlobalHandlers`, with the SDK's `prepareStackTrace` counted, and promises made in a `vm`
 * context standing for a workflow's. Posts what it saw. `HERALD_TEST_SDK_HOOK=1` leaves the SDK's hook in place.
 */
const handlers = new GlobalHandlers();
if (process.env.HERALD_TEST_SDK_HOOK !== '1') installLazyPromiseStacks(handlers);
const internals = handlers as unknown as { overridePrepareStackTrace(): void; setPromiseHook(): void };
internals.overridePrepareStackTrace();
let formatted = 0;
const sdkPrepareStackTrace = Error.prepareStackTrace!;
Error.prepareStackTrace = (error, callSites) => {
  formatted++;
  return sdkPrepareStackTrace(error, callSites);
};
internals.setPromiseHook();

const store = { promiseToStack: new Map<unknown, { formatted: string }>(), childToParent: new Map() };
const context = vm.createContext({ __TEMPORAL_ACTIVATOR__: { info: { runId: 'run-1' }, promiseStackStore: store } });
vm.runInContext(
  `function madeByAWorkflow() { return new Promise(() => undefined); }
   globalThis.kept = Array.from({ length: 50 }, madeByAWorkflow);`,
  context,
);
const formattedWhenMade = formatted;
const kept = (context as { kept: Array<Promise<unknown> & { runId?: string }> }).kept;
const stack = store.promiseToStack.get(kept[0]);
parentPort!.postMessage({
  formattedWhenMade,
  tracked: kept.filter((promise) => store.promiseToStack.has(promise)).length,
  runIds: [...new Set(kept.map((promise) => promise.runId))],
  firstStack: stack?.formatted,
  formattedAfterOneRead: formatted,
});
