// Protocol plumbing: message types and enums from the protobufjs JSON bundle that @temporalio/proto ships
// (it ships no .proto files), plus the Timestamp/Duration/Any conversions every other module needs.
// Messages are handled as plain objects (longs as numbers, enums as numbers, bytes as Buffers).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const root = require('@temporalio/proto/protos/json-module');

export type Msg = Record<string, any>;

interface ProtoType {
  fields: Record<string, { id: number }>;
  decode(buf: Uint8Array): unknown;
  encode(msg: unknown): { finish(): Uint8Array };
  toObject(msg: unknown, opts: object): Msg;
  fromObject(obj: object): unknown;
}

const typeCache = new Map<string, ProtoType>();
export function protoType(fullName: string): ProtoType {
  let t = typeCache.get(fullName);
  if (!t) {
    t = root.lookupType(fullName) as ProtoType;
    typeCache.set(fullName, t);
  }
  return t;
}

const TO_OBJECT = { longs: Number, enums: Number, defaults: false, arrays: true, objects: true };

export function decode(fullName: string, buf: Uint8Array): Msg {
  const t = protoType(fullName);
  return t.toObject(t.decode(buf), TO_OBJECT);
}

/**
 * `bytes` in memory of its own. Small Buffers are slices of Node's shared 8 KiB pool slabs, and one slice kept for
 * days keeps its whole slab alive: heap snapshots of temporal-dev with 3,000 waiting runs showed 51 MiB of slabs held
 * that way (17 KiB a run) before stored bytes got their own memory.
 */
export function ownedCopy(bytes: Uint8Array): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  copy.set(bytes);
  return copy;
}

/**
 * A flat copy of a decoded string kept for long (issue 15). protobufjs builds a string under 64 bytes by appending
 * 8-character pieces, a tree of ConsStrings that V8 flattens only when the string is hashed (a Map key): a kept
 * request id was ~8 of them, ~350 bytes instead of 56.
 */
export function flatString(value: string): string {
  return Buffer.from(value, 'utf8').toString('utf8');
}

/**
 * A message field's value given already encoded: a workflow task's history is sent from the bytes it is stored as
 * rather than decoded into objects and encoded again (which was most of temporal-dev's CPU when a burst's runs were
 * replayed from full histories). `encodeAnswer` splices it in as the field's bytes; only at the top level of the
 * message it encodes, so a message nesting one is encoded first and nested as an `EncodedMessage` in turn.
 */
export class EncodedMessage {
  constructor(readonly bytes: Uint8Array) {}
}

/** Encodes a plain object; fromObject tolerates the small shape differences of hand-built responses. */
export function encode(fullName: string, obj: Msg): Buffer {
  const t = protoType(fullName);
  return Buffer.from(t.encode(t.fromObject(obj)).finish());
}

/**
 * `encode` for an answer, whose top-level fields may be `EncodedMessage`s. Kept apart from `encode`, which every
 * appended history event and every decoded request's copy goes through and which never meets one.
 */
export function encodeAnswer(fullName: string, obj: Msg): Buffer {
  let plain = obj;
  const spliced: Uint8Array[] = [];
  for (const [name, value] of Object.entries(obj)) {
    if (!(value instanceof EncodedMessage)) continue;
    if (plain === obj) plain = { ...obj };
    delete plain[name];
    spliced.push(lengthDelimited(protoType(fullName).fields[name]!.id, value.bytes));
  }
  const rest = encode(fullName, plain);
  // Protobuf allows a message's fields in any order: the spliced ones follow the rest.
  return spliced.length ? Buffer.concat([rest, ...spliced]) : rest;
}

/** `bytes` as field `fieldNumber` of wire type 2 (length-delimited): its tag, its length, itself. */
export function lengthDelimited(fieldNumber: number, bytes: Uint8Array): Buffer {
  return Buffer.concat([lengthDelimitedHeader(fieldNumber, bytes.length), bytes]);
}

/** What goes before `length` bytes of field `fieldNumber` of wire type 2: the tag, then the length. */
export function lengthDelimitedHeader(fieldNumber: number, length: number): Buffer {
  const header = Buffer.allocUnsafe(20);
  return header.subarray(0, writeVarint(header, writeVarint(header, 0, fieldNumber * 8 + 2), length));
}

/** Writes `value` as a protobuf varint at `at` (room enough is the caller's); returns where it ends. */
export function writeVarint(to: Buffer, at: number, value: number): number {
  while (value >= 0x80) {
    to[at++] = (value % 0x80) | 0x80;
    value = Math.floor(value / 0x80);
  }
  to[at++] = value;
  return at;
}

export function serviceMethods(fullName: string): Record<string, { requestType: string; responseType: string }> {
  const svc = root.lookupService(fullName);
  const out: Record<string, { requestType: string; responseType: string }> = {};
  for (const [name, m] of Object.entries<any>(svc.methods)) {
    m.resolve();
    out[name] = { requestType: m.resolvedRequestType.fullName.slice(1), responseType: m.resolvedResponseType.fullName.slice(1) };
  }
  return out;
}

function enumValues(name: string): Record<string, number> {
  const values: Record<string, number> = root.lookupEnum(`temporal.api.enums.v1.${name}`).values;
  const short: Record<string, number> = {};
  const prefix = Object.keys(values)[0]!.replace(/UNSPECIFIED$/, '');
  for (const [k, v] of Object.entries(values)) short[k.startsWith(prefix) ? k.slice(prefix.length) : k] = v;
  return short;
}

// Enums keyed by their short names: EventType.TIMER_FIRED, RetryState.TIMEOUT ...
export const EventType = enumValues('EventType');
export const CommandType = enumValues('CommandType');
export const WorkflowStatus = enumValues('WorkflowExecutionStatus');
export const RetryState = enumValues('RetryState');
export const TimeoutType = enumValues('TimeoutType');
export const ParentClosePolicy = enumValues('ParentClosePolicy');
export const WorkflowTaskFailedCause = enumValues('WorkflowTaskFailedCause');
export const ReusePolicy = enumValues('WorkflowIdReusePolicy');
export const ConflictPolicy = enumValues('WorkflowIdConflictPolicy');
export const UpdateStage = enumValues('UpdateWorkflowExecutionLifecycleStage');
export const PendingActivityState = enumValues('PendingActivityState');
export const TaskQueueKind = enumValues('TaskQueueKind');
export const TaskQueueType = enumValues('TaskQueueType');
export const QueryRejectCondition = enumValues('QueryRejectCondition');
export const HistoryEventFilterType = enumValues('HistoryEventFilterType');
export const QueryResultType = enumValues('QueryResultType');

export function timestamp(ms: number): Msg {
  return { seconds: Math.floor(ms / 1000), nanos: Math.round((ms % 1000) * 1e6) };
}
export function timestampMs(ts: Msg | undefined | null): number | undefined {
  if (!ts) return undefined;
  return Number(ts.seconds ?? 0) * 1000 + Math.floor(Number(ts.nanos ?? 0) / 1e6);
}
export function duration(ms: number): Msg {
  return { seconds: Math.floor(ms / 1000), nanos: Math.round((ms % 1000) * 1e6) };
}
/** Duration in ms; 0 when unset (Temporal's "no timeout"). */
export function durationMs(d: Msg | undefined | null): number {
  if (!d) return 0;
  return Number(d.seconds ?? 0) * 1000 + Math.floor(Number(d.nanos ?? 0) / 1e6);
}

export function packAny(fullName: string, obj: Msg): Msg {
  return { type_url: `type.googleapis.com/${fullName}`, value: encode(fullName, obj) };
}
export function unpackAny(any: Msg | undefined): { type: string; value: Msg } | undefined {
  if (!any) return undefined;
  const typeUrl: string = any.type_url ?? any.typeUrl ?? '';
  const type = typeUrl.replace(/^type.googleapis.com\//, '');
  return { type, value: decode(type, any.value ?? Buffer.alloc(0)) };
}
