// A workflow task's history sent from its stored bytes (`EncodedMessage`) must read, on the worker's side, exactly
// as the same events encoded the ordinary way: at the top level of a poll response and nested in another response.
import assert from 'node:assert/strict';
import { decode, encode, encodeAnswer, EncodedMessage, EventType, lengthDelimited, type Msg } from '../proto';

const HISTORY_EVENT = 'temporal.api.history.v1.HistoryEvent';
const POLL_RESPONSE = 'temporal.api.workflowservice.v1.PollWorkflowTaskQueueResponse';

function signalEvent(eventId: number, payloadBytes: number): Msg {
  return {
    eventId,
    eventTime: { seconds: 1_800_000_000 + eventId, nanos: 0 },
    eventType: EventType.WORKFLOW_EXECUTION_SIGNALED,
    taskId: eventId,
    workflowExecutionSignaledEventAttributes: {
      signalName: 'postEdited',
      input: { payloads: [{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.alloc(payloadBytes, 0x61) }] },
    },
  };
}

describe('temporal-dev: a history spliced in from its stored bytes', () => {
  // Lengths that need one, two and three bytes of varint.
  const events = [signalEvent(1, 10), signalEvent(2, 300), signalEvent(3, 20_000)];
  const task = { taskToken: Buffer.from('token'), workflowType: { name: 'publishPost' }, startedEventId: 3, attempt: 2 };
  const spliced = new EncodedMessage(Buffer.concat(events.map((event) => lengthDelimited(1, encode(HISTORY_EVENT, event)))));

  it('decodes as the same events, with every other field of the response', () => {
    const expected = decode(POLL_RESPONSE, encode(POLL_RESPONSE, { ...task, history: { events } }));
    const actual = decode(POLL_RESPONSE, encodeAnswer(POLL_RESPONSE, { ...task, history: spliced }));
    assert.equal(actual.history.events.length, 3);
    assert.equal(actual.history.events[2].workflowExecutionSignaledEventAttributes.input.payloads[0].data.length, 20_000);
    assert.deepEqual(actual, expected);
  });

  it('nested in another response once encoded on its own', () => {
    const response = 'temporal.api.workflowservice.v1.StartWorkflowExecutionResponse';
    const nested = new EncodedMessage(encodeAnswer(POLL_RESPONSE, { ...task, history: spliced }));
    const actual = decode(response, encodeAnswer(response, { runId: 'run-1', started: true, eagerWorkflowTask: nested }));
    assert.equal(actual.runId, 'run-1');
    assert.deepEqual(actual.eagerWorkflowTask, decode(POLL_RESPONSE, encode(POLL_RESPONSE, { ...task, history: { events } })));
  });
});
