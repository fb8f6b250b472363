import v8 from 'node:v8';
import { cutoffStackTrace } from '@temporalio/common';
import type { GlobalHandlers } from '@temporalio/worker/lib/workflow/vm-shared';
import type { PromiseStackStore, Stack } from '@temporalio/workflow/lib/internals';

/**
 * The workflow stack trace query's promise stacks, formatted when a query asks for them instead of when each promise
 * is made (issue 15, CPU per publish). Runs in the workflow thread (`workflow-thread.ts`), before the SDK installs its
 * hooks.
 *
 * The SDK keeps, for every pending promise a workflow makes, the stack that made it: the `__stack_trace` and
 * `__enhanced_stack_trace` queries (the Web UI's "Stack Trace" tab) read them. Its promise hook formats that stack at
 * once: two `Function` compilations to reach the workflow's globals, a source-map lookup per frame, a formatted and
 * a structured copy, and regular expressions over both. That was ~30 % of the workflow thread's busy time under
 * bench:posts, for stacks nearly always dropped unread when the promise settles a few milliseconds later.
 *
 * Here the hook captures the same frames (the same `Error`, made in the workflow's realm, so the same
 * `Error.stackTraceLimit`) as V8's call sites, and the stack is formatted by the SDK's own `prepareStackTrace` from
 * them the first time a query reads it: the queries answer exactly what they did (test/temporal-worker/promise-stacks.test.ts
 * holds both queries to the SDK's own answers). What the hook must still decide at once is read from the first call
 * sites only: whether the promise is one that `Promise.all` and its siblings make inside themselves, which the SDK
 * links to the aggregate instead of keeping. The workflow's globals are reached through one compiled function per
 * realm, kept, instead of one compiled per promise.
 */

/** What the SDK keeps per pending promise (`Stack`): here with both forms computed on first read. */
class LazyStack implements Stack {
  private computed: Stack | undefined;

  constructor(
    /** The capture, whose `stack` is its call sites (made so by the hook); let go of once formatted. */
    private error: Error | undefined,
    private readonly format: (error: Error, callSites: NodeJS.CallSite[]) => Stack,
  ) {}

  get formatted(): string {
    return this.computedStack().formatted;
  }

  get structured(): Stack['structured'] {
    return this.computedStack().structured;
  }

  private computedStack(): Stack {
    if (this.computed === undefined) {
      const error = this.error!;
      this.computed = this.format(error, error.stack as unknown as NodeJS.CallSite[]);
      this.error = undefined;
    }
    return this.computed;
  }
}

interface WorkflowActivator {
  info: { runId: string };
  promiseStackStore: PromiseStackStore;
}

type RealmFunction = FunctionConstructor;

/** A realm's `globalThis.<name>`, read through a function compiled once per realm (the SDK compiled one per promise). */
function realmGlobal<T>(name: string): (promise: Promise<unknown>) => T | undefined {
  const readers = new WeakMap<RealmFunction, () => T | undefined>();
  return (promise) => {
    const realmFunction = promise.constructor.constructor as RealmFunction;
    let read = readers.get(realmFunction);
    if (read === undefined) {
      read = realmFunction(`return globalThis.${name}`) as () => T | undefined;
      readers.set(realmFunction, read);
    }
    return read();
  };
}

const activatorOf = realmGlobal<WorkflowActivator>('__TEMPORAL_ACTIVATOR__');
const errorClassOf = realmGlobal<ErrorConstructor>('Error');

// The SDK's own tests on a formatted stack (vm-shared.js), kept as they are.
const madeByAggregate = /^\s+at\sPromise\.then \(<anonymous>\)\n\s+at (Function|Promise)\.(race|all|allSettled|any) \(<anonymous>\)\n/;
const isAggregate = /^\s+at (Function|Promise)\.(race|all|allSettled|any) \(<anonymous>\)\n/;
const hookFrames = /^Error\n\s*at [^\n]+\n(\s*at initAll \(node:internal\/promise_hooks:\d+:\d+\)\n)?/;
/** An aggregate's frame as V8 prints it (the SDK prints native frames unmapped, so its text starts the same). */
const aggregateFrame = /^(Function|Promise)\.(race|all|allSettled|any) \(<anonymous>\)$/;

/** Replaces the SDK's `setPromiseHook` on its thread's `globalHandlers`; `install()` calls it after `prepareStackTrace`. */
export function installLazyPromiseStacks(handlers: GlobalHandlers): void {
  (handlers as unknown as { setPromiseHook(): void }).setPromiseHook = () => setLazyPromiseHook(handlers);
}

function setLazyPromiseHook(handlers: GlobalHandlers): void {
  const OuterError = Error;
  // The SDK's override, just installed: it formats a workflow's frames (source-mapped) and records their structured form.
  const sdkPrepareStackTrace = OuterError.prepareStackTrace!;
  let capturing = false;
  OuterError.prepareStackTrace = (error, callSites) => (capturing ? callSites : sdkPrepareStackTrace(error, callSites));

  /** The SDK's formatting of one capture, as its hook did it at once. */
  const format = (error: Error, callSites: NodeJS.CallSite[]): Stack => {
    handlers.currentStackTrace = undefined;
    const text = String(sdkPrepareStackTrace(error, callSites));
    const structured = handlers.currentStackTrace ?? [];
    handlers.currentStackTrace = undefined;
    cutoffStructuredStackTrace(structured);
    return { formatted: cutoffStackTrace(text.replace(hookFrames, '')), structured };
  };

  let currentAggregation: Promise<unknown> | undefined;
  const stopPromiseHook = v8.promiseHooks.createHook({
    init(created, parent) {
      const activator = activatorOf(created);
      if (!activator) return; // not a workflow's promise
      const store = activator.promiseStackStore;
      (created as Promise<unknown> & { runId?: string }).runId = activator.info.runId; // the SDK's unhandled rejection handler reads it
      const ErrorClass = errorClassOf(created);
      if (ErrorClass === undefined || ErrorClass === OuterError) return; // the SDK keeps only a workflow realm's stacks
      // Made here, not in a helper: the SDK strips exactly one frame (this hook's) before the workflow's own.
      const error = new ErrorClass();
      capturing = true;
      try {
        void error.stack; // while capturing, `stack` is the call sites themselves
      } finally {
        capturing = false;
      }
      const callSites = error.stack as unknown as NodeJS.CallSite[];
      let promise: Promise<unknown> = created;
      let stack: Stack;
      if (mayTouchAggregate(callSites)) {
        // Rare (an aggregate, or a `then` it calls): formatted now, and the SDK's tests run on exactly what it formatted.
        stack = format(error, callSites);
        if (currentAggregation && madeByAggregate.test(stack.formatted)) {
          // Skip internal promises created by the aggregator and link directly (the SDK's words).
          promise = currentAggregation;
          stack = store.promiseToStack.get(currentAggregation)!;
        } else {
          currentAggregation = isAggregate.test(stack.formatted) ? created : undefined;
        }
      } else {
        stack = new LazyStack(error, format);
        currentAggregation = undefined;
      }
      if (promise === parent) return;
      store.promiseToStack.set(promise, stack);
      const parents = store.childToParent.get(promise) ?? new Set();
      if (parent) parents.add(parent);
      store.childToParent.set(promise, parents);
    },
    settled(promise) {
      const store = activatorOf(promise)?.promiseStackStore;
      if (!store) return;
      store.childToParent.delete(promise);
      store.promiseToStack.delete(promise);
    },
  });
  Object.assign(handlers, { stopPromiseHook, promiseHookInstalled: true });
}

/**
 * Whether either of the SDK's aggregate tests could pass on this stack: its first own frame (after the hook's, and
 * Node's `initAll` that calls it, as `hookFrames` strips them) is an aggregate, or a `then` that an aggregate called.
 */
function mayTouchAggregate(callSites: NodeJS.CallSite[]): boolean {
  const afterHook = callSites[1];
  const first = afterHook?.getFunctionName() === 'initAll' && afterHook.getFileName() === 'node:internal/promise_hooks' ? 2 : 1;
  const frame = String(callSites[first]);
  return aggregateFrame.test(frame) || (frame === 'Promise.then (<anonymous>)' && aggregateFrame.test(String(callSites[first + 1])));
}

/** The SDK's `cutoffStructuredStackTrace` (vm-shared.js, not exported): the structured form cut where the text is. */
function cutoffStructuredStackTrace(stackTrace: Stack['structured']): void {
  stackTrace.shift();
  if (stackTrace[0]?.function_name === 'initAll' && stackTrace[0].file_path === 'node:internal/promise_hooks') stackTrace.shift();
  const cut = stackTrace.findIndex(
    ({ function_name, file_path }) =>
      function_name &&
      file_path &&
      ((/^Activator\.\S+NextHandler$/.test(function_name) && /.*[\\/]workflow[\\/](?:src|lib)[\\/]internals\.[jt]s$/.test(file_path)) ||
        (/Script\.runInContext/.test(function_name) && /^node:vm|vm\.js$/.test(file_path))),
  );
  if (cut > -1) stackTrace.splice(cut);
}
