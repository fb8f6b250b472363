// Temporal's HTTP API as the Web UI calls it: every /api/v1 route the UI uses, with the shapes the real server's
// JSON mapping gives (camelCase, int64 as strings, full enum names, RFC 3339 times, "10s" durations, base64 bytes),
// errors mapped from gRPC codes, long polls, the history.json download and the ui-server's settings.
import assert from 'node:assert/strict';
import http from 'node:http';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { silenceSdkLogs } from '../../test/helpers/temporal';
import { startServer, type RunningServer } from '../index';
import { useSuite } from './setup';
import { accumulator, addSignal, runsSleepy, totalQuery, waitsADay } from './workflows';

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3}|\.\d{6}|\.\d{9})?Z$/;
const WRITE_HEADERS = { 'content-type': 'application/json', 'caller-type': 'operator' };

let server: RunningServer;

async function createEnvWithHttp(): Promise<TestWorkflowEnvironment> {
  silenceSdkLogs('ERROR');
  server = await startServer({ port: 0, http: { port: 0 } });
  const env = await TestWorkflowEnvironment.createFromExistingServer({ address: server.address });
  const teardown = env.teardown.bind(env);
  env.teardown = async () => {
    await teardown();
    await server.close();
  };
  return env;
}

async function api(path: string, init: RequestInit = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${server.httpUrl}${path}`, init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

async function ok(path: string, init?: RequestInit): Promise<any> {
  const res = await api(path, init);
  assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
  return res.body;
}

const post = (body: unknown = {}): RequestInit => ({ method: 'POST', headers: WRITE_HEADERS, body: JSON.stringify(body) });
const wf = (id: string) => `/api/v1/namespaces/default/workflows/${encodeURIComponent(id)}`;

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('temporal-dev: HTTP API (/api/v1) for the Web UI', function () {
  const s = useSuite(createEnvWithHttp);

  it('answers the ui-server settings with reset, batch actions and start-workflow switched off', async () => {
    const settings = await ok('/api/v1/settings');
    assert.equal(settings.DefaultNamespace, 'default');
    assert.equal(settings.Auth.Enabled, false);
    assert.equal(settings.WorkflowResetDisabled, true);
    assert.equal(settings.BatchActionsDisabled, true);
    assert.equal(settings.StartWorkflowDisabled, true);
    assert.equal(settings.WorkflowTerminateDisabled, false);
    assert.match(settings.Version, /^2\.\d+\.\d+$/);
  });

  it('serves system info, cluster info and namespaces in proto3 JSON', async () => {
    const info = await ok('/api/v1/system-info');
    assert.match(info.serverVersion, /temporal-dev/);
    assert.equal(info.capabilities.supportsSchedules, undefined, 'false is the default and left out');
    assert.equal(info.capabilities.countGroupByExecutionStatus, true);
    const cluster = await ok('/api/v1/cluster-info');
    assert.equal(cluster.historyShardCount, 1);
    const list = await ok('/api/v1/namespaces');
    assert.deepEqual(list.namespaces.map((n: any) => n.namespaceInfo.name), ['default']);
    const ns = await ok('/api/v1/namespaces/default');
    assert.equal(ns.namespaceInfo.state, 'NAMESPACE_STATE_REGISTERED');
    assert.equal(ns.config.workflowExecutionRetentionTtl, '86400s');
    const missing = await api('/api/v1/namespaces/nope');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 5);
    assert.match(missing.body.message, /Namespace nope is not found/);
    assert.equal(missing.body.details[0]['@type'], 'type.googleapis.com/temporal.api.errordetails.v1.NamespaceNotFoundFailure');
    assert.equal(missing.body.details[0].namespace, 'nope');
  });

  it('lists system and custom search attributes; AddSearchAttributes registers them once', async () => {
    await s.env.connection.operatorService.addSearchAttributes({
      namespace: 'default',
      searchAttributes: { PostId: 2 /* KEYWORD */ },
    });
    await s.env.connection.operatorService.addSearchAttributes({ namespace: 'default', searchAttributes: { PostId: 2 } });
    const attrs = await ok('/api/v1/namespaces/default/search-attributes');
    assert.equal(attrs.customAttributes.PostId, 'INDEXED_VALUE_TYPE_KEYWORD');
    assert.equal(attrs.systemAttributes.WorkflowId, 'INDEXED_VALUE_TYPE_KEYWORD');
    assert.equal(attrs.systemAttributes.StartTime, 'INDEXED_VALUE_TYPE_DATETIME');
    await assert.rejects(
      s.env.connection.operatorService.addSearchAttributes({ namespace: 'default', searchAttributes: { PostId: 3 } }),
      /different type/,
    );
  });

  it('lists, counts, describes and pages the history of a workflow, and finds it by a search attribute', async () => {
    const taskQueue = s.taskQueue();
    const workflowId = `http-list/${taskQueue}`; // a slash in the id travels percent-encoded in the path
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(accumulator, {
        taskQueue,
        workflowId,
        workflowExecutionTimeout: '1 hour',
        searchAttributes: { CustomKeywordField: [taskQueue] },
      });
      await handle.signal(addSignal, 3);
      const query = encodeURIComponent(`CustomKeywordField = '${taskQueue}'`);
      const listed = await eventually(
        () => ok(`/api/v1/namespaces/default/workflows?query=${query}&pageSize=10`),
        (body) => body.executions?.length === 1 && Number(body.executions[0].historyLength) >= 5,
        'the workflow to be listed',
      );
      const execution = listed.executions[0];
      assert.equal(execution.execution.workflowId, workflowId);
      assert.equal(execution.execution.runId, handle.firstExecutionRunId);
      assert.equal(execution.type.name, 'accumulator');
      assert.equal(execution.status, 'WORKFLOW_EXECUTION_STATUS_RUNNING');
      assert.match(execution.startTime, RFC3339);
      assert.equal(typeof execution.historyLength, 'string', 'int64 travels as a string');
      assert.equal(execution.taskQueue, taskQueue);
      const keyword = execution.searchAttributes.indexedFields.CustomKeywordField;
      assert.equal(Buffer.from(keyword.metadata.encoding, 'base64').toString(), 'json/plain');
      assert.deepEqual(JSON.parse(Buffer.from(keyword.data, 'base64').toString()), [taskQueue]);

      const count = await ok(`/api/v1/namespaces/default/workflow-count?query=${encodeURIComponent(`TaskQueue = '${taskQueue}' GROUP BY ExecutionStatus`)}`);
      assert.equal(count.count, '1');
      assert.equal(count.groups[0].count, '1');
      assert.equal(Buffer.from(count.groups[0].groupValues[0].data, 'base64').toString(), '"Running"');

      const described = await ok(`${wf(workflowId)}?execution.runId=${handle.firstExecutionRunId}`);
      assert.equal(described.workflowExecutionInfo.status, 'WORKFLOW_EXECUTION_STATUS_RUNNING');
      assert.equal(described.executionConfig.workflowExecutionTimeout, '3600s');
      assert.equal(described.executionConfig.taskQueue.kind, 'TASK_QUEUE_KIND_NORMAL');

      const firstPage = await ok(`${wf(workflowId)}/history?maximumPageSize=2`);
      assert.equal(firstPage.history.events.length, 2);
      const started = firstPage.history.events[0];
      assert.equal(started.eventId, '1');
      assert.equal(started.eventType, 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED');
      assert.match(started.eventTime, RFC3339);
      assert.equal(started.workflowExecutionStartedEventAttributes.workflowType.name, 'accumulator');
      assert.ok(firstPage.nextPageToken, 'more events follow');
      const rest = await ok(`${wf(workflowId)}/history?next_page_token=${encodeURIComponent(firstPage.nextPageToken)}`);
      const signaled = rest.history.events.find((e: any) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED');
      assert.equal(signaled.workflowExecutionSignaledEventAttributes.signalName, 'add');
      const payload = signaled.workflowExecutionSignaledEventAttributes.input.payloads[0];
      assert.equal(Buffer.from(payload.data, 'base64').toString(), '3');

      const reverse = await ok(`${wf(workflowId)}/history-reverse?execution.runId=${handle.firstExecutionRunId}`);
      const ids = reverse.history.events.map((e: any) => Number(e.eventId));
      assert.ok(ids.length >= firstPage.history.events.length + rest.history.events.length);
      assert.deepEqual(ids, [...ids].sort((a, b) => b - a), 'newest first');

      const download = await api(`${wf(workflowId)}/run/${handle.firstExecutionRunId}/history.json`);
      assert.equal(download.status, 200);
      assert.match(download.headers.get('content-disposition') ?? '', /attachment/);
      assert.ok(download.body.events.length >= firstPage.history.events.length + rest.history.events.length);
      assert.equal(download.body.events[0].eventType, 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED');
      await handle.terminate('test over');
    });
  });

  it('long-polls history for new events (waitNewEvent) and answers queries, signals, cancel and terminate', async () => {
    const taskQueue = s.taskQueue();
    const workflowId = `http-write-${taskQueue}`;
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(accumulator, { taskQueue, workflowId });
      const before = await eventually(
        () => ok(`${wf(workflowId)}/history?waitNewEvent=true`),
        (body) => body.history.events.some((e: any) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED'),
        'the first workflow task',
      );
      const seen = before.history.events.length;
      const token = before.nextPageToken;
      assert.ok(token, 'an open run gives a token to wait on');
      const waiting = ok(`${wf(workflowId)}/history?waitNewEvent=true&nextPageToken=${encodeURIComponent(token)}`);
      await new Promise((r) => setTimeout(r, 200));
      const signal = await api(`${wf(workflowId)}/signal/add`, post({ input: { payloads: [{ metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('7').toString('base64') }] } }));
      assert.equal(signal.status, 200);
      const woke = await waiting;
      assert.equal(woke.history.events[0].eventId, String(seen + 1));
      assert.equal(woke.history.events[0].eventType, 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED');

      const query = await eventually(
        // The UI repeats the path's workflow id in the body; the path wins, as with grpc-gateway.
        () => api(`${wf(workflowId)}/query/total`, post({ execution: { workflowId }, query: { queryType: 'total' } })),
        (res) => res.status === 200 && Buffer.from(res.body.queryResult?.payloads?.[0]?.data ?? '', 'base64').toString() === '7',
        'the query to see the signal',
      );
      assert.equal(Buffer.from(query.body.queryResult.payloads[0].metadata.encoding, 'base64').toString(), 'json/plain');
      assert.equal(await handle.query(totalQuery), 7);

      const cancel = await api(`${wf(workflowId)}/cancel`, post({ reason: 'from the UI' }));
      assert.equal(cancel.status, 200);
      await eventually(
        () => ok(`${wf(workflowId)}/history`),
        (body) => body.history.events.some((e: any) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED'),
        'the cancel request in history',
      );
      const terminate = await api(`${wf(workflowId)}/terminate`, post({ reason: 'stuck', workflowExecution: { runId: handle.firstExecutionRunId } }));
      assert.equal(terminate.status, 200);
      const described = await ok(wf(workflowId));
      assert.equal(described.workflowExecutionInfo.status, 'WORKFLOW_EXECUTION_STATUS_TERMINATED');
      const closed = await ok(`${wf(workflowId)}/history?waitNewEvent=true&historyEventFilterType=HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT`);
      assert.equal(closed.history.events[0].workflowExecutionTerminatedEventAttributes.reason, 'stuck');
      const again = await api(`${wf(workflowId)}/terminate`, post({ reason: 'twice' }));
      assert.equal(again.status, 404);
      assert.equal(again.body.code, 5);
    });
  });

  it('shows a pending activity with its attempt, durations and timestamps', async () => {
    const taskQueue = s.taskQueue();
    const workflowId = `http-activity-${taskQueue}`;
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(runsSleepy, { taskQueue, workflowId, args: [3_000, 60_000] });
      const described = await eventually(
        () => ok(wf(workflowId)),
        (body) => body.pendingActivities?.[0]?.state === 'PENDING_ACTIVITY_STATE_STARTED',
        'the activity to start',
      );
      const activity = described.pendingActivities[0];
      assert.equal(activity.activityType.name, 'sleepy');
      assert.equal(activity.attempt, 1);
      assert.match(activity.lastStartedTime, RFC3339);
      await handle.terminate();
    });
  });

  it('tells which workers poll a task queue, and none once they stopped', async () => {
    const taskQueue = s.taskQueue();
    const path = `/api/v1/namespaces/default/task-queues/${taskQueue}`;
    await s.withWorker(taskQueue, async () => {
      const workflow = await eventually(() => ok(`${path}?taskQueueType=1`), (b) => b.pollers?.length > 0, 'a workflow poller');
      const activity = await eventually(() => ok(`${path}?taskQueueType=2`), (b) => b.pollers?.length > 0, 'an activity poller');
      assert.match(workflow.pollers[0].identity, /@/);
      assert.match(workflow.pollers[0].lastAccessTime, RFC3339);
      assert.equal(activity.pollers[0].identity, workflow.pollers[0].identity);
    });
    const other = await ok(`/api/v1/namespaces/default/task-queues/nobody-polls-${taskQueue}?taskQueueType=1`);
    assert.deepEqual(other, {}, 'no pollers: an empty answer, as the real server gives');
  });

  it('maps errors from gRPC codes and refuses what it does not support', async () => {
    const badQuery = await api(`/api/v1/namespaces/default/workflows?query=${encodeURIComponent("WorkflowId = ")}`);
    assert.equal(badQuery.status, 400);
    assert.equal(badQuery.body.code, 3);
    const missing = await api(wf('no-such-workflow'));
    assert.equal(missing.status, 404);
    assert.equal(missing.body.details[0]['@type'], 'type.googleapis.com/temporal.api.errordetails.v1.NotFoundFailure');
    const schedules = await api('/api/v1/namespaces/default/schedules');
    assert.equal(schedules.status, 501);
    assert.equal(schedules.body.code, 12);
    const reset = await api(`${wf('x')}/reset`, post({}));
    assert.equal(reset.status, 501);
    const unknown = await api('/api/v1/nothing-here');
    assert.equal(unknown.status, 404);
    const noHeader = await api(`${wf('x')}/terminate`, { method: 'POST', body: '{}' });
    assert.equal(noHeader.status, 403, 'a write without a custom header could come from another site');
    const badJson = await api(`${wf('x')}/terminate`, { method: 'POST', headers: WRITE_HEADERS, body: '{' });
    assert.equal(badJson.status, 400);
  });

  it('on loopback answers only requests that name a loopback host (no DNS rebinding)', async () => {
    const withHost = (hostHeader: string) =>
      new Promise<number>((resolve, reject) => {
        const target = new URL(`${server.httpUrl}/api/v1/settings`);
        http.get({ hostname: target.hostname, port: target.port, path: target.pathname, headers: { host: hostHeader } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        }).on('error', reject);
      });
    const port = new URL(server.httpUrl!).port;
    assert.equal(await withHost(`rebound.example:${port}`), 403);
    assert.equal(await withHost('127.0.0.1.nip.io'), 403);
    assert.equal(await withHost(`localhost:${port}`), 200);
    assert.equal(await withHost(`127.0.0.1:${port}`), 200);
    assert.equal(await withHost(`[::1]:${port}`), 200);
  });

  it('keeps the timer of a waiting workflow visible with its duration', async () => {
    const taskQueue = s.taskQueue();
    const workflowId = `http-timer-${taskQueue}`;
    await s.withWorker(taskQueue, async () => {
      const handle = await s.env.client.workflow.start(waitsADay, { taskQueue, workflowId });
      const history = await eventually(
        () => ok(`${wf(workflowId)}/history`),
        (body) => body.history.events.some((e: any) => e.eventType === 'EVENT_TYPE_TIMER_STARTED'),
        'the timer',
      );
      const timer = history.history.events.find((e: any) => e.eventType === 'EVENT_TYPE_TIMER_STARTED');
      assert.equal(timer.timerStartedEventAttributes.startToFireTimeout, '86400s');
      await handle.terminate();
    });
  });
});
