// Where one publish's milliseconds go, request by request: loaded into the Herald process of `bench:posts` with
//   HERALD_BENCH_NODE_ARGS="--require <out>/bench/publish-trace.js" node <out>/bench/posts.js 3 8
// it prints to stderr, for each POST /api/v1/posts or /api/v1/threads that ran alone (the 200 ms phase sends one at a time; requests
// that overlapped another are not printed), one line `TRACE ms what | ms what | ...` from the request's arrival: each
// statement sent and answered (its first words), each HTTP call to a platform, the Temporal client's start, each
// NOTIFY of the change feed, and the response. Measuring only: it wraps the libraries' methods in this process.
import http from 'node:http';
import pg from 'pg';
import { WorkflowClient } from '@temporalio/client';
import { Dispatcher } from 'undici';
import { Worker as WorkerThread } from 'node:worker_threads';

let inFlight = 0;
let startedAt = 0n;
let marks: string[] | null = null;
let overlapped = false;

function mark(what: string): void {
  if (marks) marks.push(`${(Number(process.hrtime.bigint() - startedAt) / 1e6).toFixed(2)} ${what}`);
}

const serverEmit = http.Server.prototype.emit as (this: http.Server, event: string, ...args: unknown[]) => boolean;
http.Server.prototype.emit = function (this: http.Server, event: string, ...args: unknown[]) {
  const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
  if (event === 'request' && req.method === 'POST' && (req.url?.startsWith('/api/v1/posts') || req.url?.startsWith('/api/v1/threads'))) {
    if (++inFlight === 1) {
      startedAt = process.hrtime.bigint();
      marks = [];
      overlapped = false;
    } else overlapped = true;
    mark('request');
    res.on('finish', () => {
      mark('response sent');
      if (--inFlight > 0) return;
      if (!overlapped && marks) process.stderr.write(`TRACE ${marks.join(' | ')}\n`);
      marks = null;
    });
  }
  return serverEmit.call(this, event, ...args);
} as typeof http.Server.prototype.emit;

type Query = (this: pg.Client, ...args: unknown[]) => unknown;
const query = pg.Client.prototype.query as unknown as Query;
(pg.Client.prototype as unknown as { query: Query }).query = function (this: pg.Client, ...args: unknown[]) {
  const config = args[0] as string | { name?: string; text?: string };
  const text = typeof config === 'string' ? config : `${config.name ? 'named: ' : ''}${config.text ?? ''}`;
  const label = text.replace(/\s+/g, ' ').trim().slice(0, 40);
  mark(`sql> ${label}`);
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === 'function') {
    args[last] = (...results: unknown[]) => {
      mark(`sql< ${label.slice(0, 24)}`);
      return (callback as (...r: unknown[]) => unknown)(...results);
    };
  }
  const result = query.apply(this, args);
  if (result instanceof Promise) void result.then(() => mark(`sql< ${label.slice(0, 24)}`), () => mark(`sql failed ${label.slice(0, 24)}`));
  return result;
};
const clientEmit = pg.Client.prototype.emit as (this: pg.Client, event: string | symbol, ...args: unknown[]) => boolean;
pg.Client.prototype.emit = function (this: pg.Client, event: string | symbol, ...args: unknown[]) {
  if (event === 'notification') mark(`NOTIFY ${(args[0] as { channel?: string }).channel}`);
  return clientEmit.call(this, event, ...args);
};

const dispatcherRequest = Dispatcher.prototype.request as (...args: unknown[]) => Promise<unknown>;
(Dispatcher.prototype as unknown as { request: typeof dispatcherRequest }).request = function (this: Dispatcher, ...args: unknown[]) {
  const options = args[0] as { method?: string; path?: string };
  mark(`http> ${options.method} ${options.path}`);
  const answer = dispatcherRequest.apply(this, args);
  void answer.then(() => mark('http< headers'), () => mark('http failed'));
  return answer;
};

const start = WorkflowClient.prototype.start;
WorkflowClient.prototype.start = function (this: WorkflowClient, ...args: Parameters<typeof start>) {
  mark('temporal> start');
  const handle = start.apply(this, args);
  void handle.then(() => mark('temporal< start'), () => mark('temporal start failed'));
  return handle;
} as typeof start;

// The worker's side of the SDK (sdk-core's bridge): an activation handed to the workflow code, its completion, and an
// activity task (local ones included) handed to the activity code. Wrapped before the worker binds them.
const bridge = (require('@temporalio/core-bridge') as { native: Record<string, (...args: unknown[]) => unknown> }).native;
const traced = (name: string, onCall: string | null, onAnswer: string | null) => {
  const original = bridge[name]!;
  bridge[name] = (...args: unknown[]) => {
    if (onCall) mark(onCall);
    const answer = original(...args);
    if (onAnswer && answer instanceof Promise) void answer.then(() => mark(onAnswer), () => undefined);
    return answer;
  };
};
traced('workerPollWorkflowActivation', null, 'core> activation');
traced('workerCompleteWorkflowActivation', 'core< activation completed', null);
traced('workerPollActivityTask', null, 'core> activity task');
traced('workerCompleteActivityTask', 'core< activity task completed', null);

// The hops to and from the workflow thread (the SDK's ThreadedVMWorkflowCreator): a request posted to it, its answer
// received on the main thread. Between `core> activation` and `core< activation completed`, these say how much was
// the workflow thread's and how much the main thread's.
const workerPost = WorkerThread.prototype.postMessage;
WorkerThread.prototype.postMessage = function (this: WorkerThread, ...args: Parameters<typeof workerPost>) {
  mark(`thread> ${(args[0] as { type?: string })?.type ?? 'message'}`);
  return workerPost.apply(this, args);
};
const workerEmit = WorkerThread.prototype.emit as (this: WorkerThread, event: string | symbol, ...args: unknown[]) => boolean;
WorkerThread.prototype.emit = function (this: WorkerThread, event: string | symbol, ...args: unknown[]) {
  if (event === 'message') mark('thread< answer');
  return workerEmit.call(this, event, ...args);
};
