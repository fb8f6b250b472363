// The proto3 JSON mapping (what grpc-gateway and Temporal's HTTP API speak), driven by the reflection types of the
// protobufjs bundle: lowerCamelCase names, 64-bit integers as strings, enums by their full names, bytes as base64,
// Timestamp as RFC 3339, Duration as "1.5s", Any as {"@type", ...fields}, wrappers and Struct as plain JSON values.
// Fields holding their default value are left out, as protojson does without EmitUnpopulated.
// Requests go the other way and come out in the same plain-object shape the gRPC path hands to handlers.
import { invalidArgument } from './errors';
import { decode, protoType, type Msg } from './proto';

interface ReflectedField {
  name: string;
  type: string;
  repeated: boolean;
  map: boolean;
  keyType?: string;
  options?: Record<string, unknown>;
  resolvedType: ReflectedType | ReflectedEnum | null;
  resolve(): ReflectedField;
}
interface ReflectedType {
  fullName: string;
  fieldsArray: ReflectedField[];
  fields: Record<string, ReflectedField>;
}
interface ReflectedEnum {
  values: Record<string, number>;
  valuesById: Record<number, string>;
}

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT_TYPES = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32', ...LONG_TYPES]);
const WRAPPERS = new Set(
  ['Double', 'Float', 'Int64', 'UInt64', 'Int32', 'UInt32', 'Bool', 'String', 'Bytes'].map((t) => `google.protobuf.${t}Value`),
);

function reflected(fullName: string): ReflectedType {
  return protoType(fullName) as unknown as ReflectedType;
}
const typeName = (t: ReflectedType) => t.fullName.replace(/^\./, '');
const isEnum = (t: unknown): t is ReflectedEnum => !!t && typeof t === 'object' && 'valuesById' in t;

function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

// ---------------------------------------------------------------------------------------------- to JSON

/** A response object (as handlers build it) in proto3 JSON. */
export function toJson(fullName: string, msg: Msg): Msg {
  const t = protoType(fullName);
  const message = t.fromObject(msg);
  return (WELL_KNOWN.has(fullName) ? wellKnownToJson(fullName, message) : messageToJson(reflected(fullName), message)) as Msg;
}

function isLong(v: unknown): v is { toString(): string } {
  return typeof v === 'object' && v !== null && 'low' in v && 'high' in v;
}

function numberOf(v: unknown): number {
  return isLong(v) ? Number(v.toString()) : Number(v ?? 0);
}

function fraction(nanos: number): string {
  if (!nanos) return '';
  const digits = String(nanos).padStart(9, '0');
  return `.${digits.endsWith('000000') ? digits.slice(0, 3) : digits.endsWith('000') ? digits.slice(0, 6) : digits}`;
}

function timestampToJson(seconds: number, nanos: number): string {
  return `${new Date(seconds * 1000).toISOString().replace(/\.000Z$/, '')}${fraction(nanos)}Z`;
}

function durationToJson(seconds: number, nanos: number): string {
  const negative = seconds < 0 || nanos < 0;
  return `${negative ? '-' : ''}${Math.abs(seconds)}${fraction(Math.abs(nanos))}s`;
}

function wellKnownToJson(name: string, msg: any): unknown {
  switch (name) {
    case 'google.protobuf.Timestamp':
      return timestampToJson(numberOf(msg.seconds), msg.nanos ?? 0);
    case 'google.protobuf.Duration':
      return durationToJson(numberOf(msg.seconds), msg.nanos ?? 0);
    case 'google.protobuf.Any': {
      const typeUrl: string = msg.type_url ?? msg.typeUrl ?? '';
      const inner = typeUrl.replace(/^.*\//, '');
      const value = msg.value ?? Buffer.alloc(0);
      const innerType = reflected(inner);
      const decoded = protoType(inner).decode(value);
      const json = WELL_KNOWN.has(inner) ? { value: wellKnownToJson(inner, decoded) } : messageToJson(innerType, decoded);
      return { '@type': typeUrl, ...(json as object) };
    }
    case 'google.protobuf.FieldMask':
      return (msg.paths ?? []).map(camel).join(',');
    case 'google.protobuf.Empty':
      return {};
    case 'google.protobuf.Struct':
      return Object.fromEntries(Object.entries(msg.fields ?? {}).map(([k, v]) => [k, wellKnownToJson('google.protobuf.Value', v)]));
    case 'google.protobuf.ListValue':
      return (msg.values ?? []).map((v: unknown) => wellKnownToJson('google.protobuf.Value', v));
    case 'google.protobuf.Value':
      if (msg.structValue) return wellKnownToJson('google.protobuf.Struct', msg.structValue);
      if (msg.listValue) return wellKnownToJson('google.protobuf.ListValue', msg.listValue);
      if (msg.stringValue !== undefined && msg.stringValue !== null) return msg.stringValue;
      if (msg.numberValue !== undefined && msg.numberValue !== null) return msg.numberValue;
      if (msg.boolValue !== undefined && msg.boolValue !== null) return msg.boolValue;
      return null;
  }
  // Wrappers: the wrapped value itself.
  const field = reflected(name).fields.value!.resolve();
  return scalarToJson(field, msg.value);
}

const WELL_KNOWN = new Set([
  'google.protobuf.Timestamp',
  'google.protobuf.Duration',
  'google.protobuf.Any',
  'google.protobuf.FieldMask',
  'google.protobuf.Empty',
  'google.protobuf.Struct',
  'google.protobuf.ListValue',
  'google.protobuf.Value',
  ...WRAPPERS,
]);

function scalarToJson(field: ReflectedField, v: unknown): unknown {
  if (LONG_TYPES.has(field.type)) return isLong(v) ? v.toString() : String(v);
  if (field.type === 'bytes') return Buffer.from(v as Uint8Array).toString('base64');
  if ((field.type === 'double' || field.type === 'float') && typeof v === 'number' && !Number.isFinite(v)) {
    return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
  }
  return v;
}

function valueToJson(field: ReflectedField, v: unknown): unknown {
  const resolved = field.resolvedType;
  if (isEnum(resolved)) return resolved.valuesById[v as number] ?? v;
  if (resolved) {
    const name = typeName(resolved);
    return WELL_KNOWN.has(name) ? wellKnownToJson(name, v) : messageToJson(resolved, v);
  }
  return scalarToJson(field, v);
}

function isDefault(field: ReflectedField, v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (field.resolvedType && !isEnum(field.resolvedType)) return false;
  if (field.options?.proto3_optional) return false;
  if (isLong(v)) return v.toString() === '0';
  if ((v as object) instanceof Uint8Array) return (v as Uint8Array).length === 0;
  return v === 0 || v === '' || v === false;
}

function messageToJson(type: ReflectedType, msg: any): unknown {
  const out: Msg = {};
  for (const field of type.fieldsArray) {
    field.resolve();
    const v = msg?.[field.name];
    if (field.map) {
      const entries = Object.entries(v ?? {});
      if (entries.length) out[field.name] = Object.fromEntries(entries.map(([k, item]) => [k, valueToJson(field, item)]));
    } else if (field.repeated) {
      if (Array.isArray(v) && v.length) out[field.name] = v.map((item) => valueToJson(field, item));
    } else if (!isDefault(field, v)) {
      out[field.name] = valueToJson(field, v);
    }
  }
  return out;
}

// -------------------------------------------------------------------------------------------- from JSON

/**
 * A request in proto3 JSON (a body, or path and query parameters gathered into an object whose values may be
 * strings) as the plain object the gRPC path decodes: longs and enums as numbers, bytes as Buffers.
 */
export function fromJson(fullName: string, json: unknown): Msg {
  const t = protoType(fullName);
  const plain = messageFromJson(reflected(fullName), json, fullName);
  const normalized = decode(fullName, Buffer.from(t.encode(t.fromObject(plain)).finish()));
  return normalized;
}

function bad(path: string, what: string): never {
  throw invalidArgument(`invalid JSON for ${path}: ${what}`);
}

function parseTimestamp(path: string, v: unknown): Msg {
  if (typeof v !== 'string') bad(path, 'a timestamp must be an RFC 3339 string');
  const m = /^(.*?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(v);
  const ms = m ? Date.parse(`${m[1]}${m[3]}`) : NaN;
  if (!m || Number.isNaN(ms)) bad(path, `not an RFC 3339 timestamp: ${v}`);
  return { seconds: Math.floor(ms / 1000), nanos: Number((m[2] ?? '').padEnd(9, '0')) };
}

function parseDuration(path: string, v: unknown): Msg {
  const m = typeof v === 'string' ? /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(v) : null;
  if (!m) bad(path, `a duration must look like "10s" or "1.5s", got ${JSON.stringify(v)}`);
  const sign = m[1] ? -1 : 1;
  return { seconds: sign * Number(m[2]), nanos: sign * Number((m[3] ?? '').padEnd(9, '0')) };
}

function wellKnownFromJson(name: string, v: unknown, path: string): unknown {
  switch (name) {
    case 'google.protobuf.Timestamp':
      return parseTimestamp(path, v);
    case 'google.protobuf.Duration':
      return parseDuration(path, v);
    case 'google.protobuf.FieldMask':
      if (typeof v !== 'string') bad(path, 'a field mask must be a string');
      return { paths: v.split(',').filter(Boolean).map((p) => p.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)) };
    case 'google.protobuf.Empty':
      return {};
    case 'google.protobuf.Any': {
      const obj = v as Msg;
      const typeUrl = obj?.['@type'];
      if (typeof typeUrl !== 'string') bad(path, 'an Any needs "@type"');
      const inner = typeUrl.replace(/^.*\//, '');
      const { '@type': _ignored, ...fields } = obj;
      const innerJson = WELL_KNOWN.has(inner) ? fields.value : fields;
      const t = protoType(inner);
      const plain = WELL_KNOWN.has(inner) ? wellKnownFromJson(inner, innerJson, path) : messageFromJson(reflected(inner), innerJson, path);
      return { type_url: typeUrl, value: Buffer.from(t.encode(t.fromObject(plain as Msg)).finish()) };
    }
    case 'google.protobuf.Struct':
      return { fields: Object.fromEntries(Object.entries(v as Msg).map(([k, x]) => [k, wellKnownFromJson('google.protobuf.Value', x, path)])) };
    case 'google.protobuf.ListValue':
      return { values: (v as unknown[]).map((x) => wellKnownFromJson('google.protobuf.Value', x, path)) };
    case 'google.protobuf.Value':
      if (v === null) return { nullValue: 0 };
      if (Array.isArray(v)) return { listValue: wellKnownFromJson('google.protobuf.ListValue', v, path) };
      if (typeof v === 'object') return { structValue: wellKnownFromJson('google.protobuf.Struct', v, path) };
      if (typeof v === 'string') return { stringValue: v };
      if (typeof v === 'number') return { numberValue: v };
      return { boolValue: Boolean(v) };
  }
  const field = reflected(name).fields.value!.resolve();
  return { value: scalarFromJson(field, v, path) };
}

function scalarFromJson(field: ReflectedField, v: unknown, path: string): unknown {
  if (field.type === 'bool') {
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === 'false') return v === 'true';
    bad(path, 'expected a boolean');
  }
  if (INT_TYPES.has(field.type)) {
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    if (typeof v === 'string' && /^-?\d+$/.test(v)) return LONG_TYPES.has(field.type) ? v : Number(v);
    bad(path, 'expected an integer');
  }
  if (field.type === 'double' || field.type === 'float') {
    const n = typeof v === 'string' ? Number(v) : v;
    if (typeof n === 'number' && !Number.isNaN(n)) return n;
    if (v === 'NaN') return NaN;
    bad(path, 'expected a number');
  }
  if (field.type === 'bytes') {
    if (typeof v !== 'string') bad(path, 'bytes must be a base64 string');
    return Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  }
  if (typeof v !== 'string') bad(path, 'expected a string');
  return v;
}

function valueFromJson(field: ReflectedField, v: unknown, path: string): unknown {
  const resolved = field.resolvedType;
  if (isEnum(resolved)) {
    if (typeof v === 'number') return v;
    if (typeof v === 'string' && v in resolved.values) return resolved.values[v];
    if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
    bad(path, `unknown enum value ${JSON.stringify(v)}`);
  }
  if (resolved) {
    const name = typeName(resolved);
    return WELL_KNOWN.has(name) ? wellKnownFromJson(name, v, path) : messageFromJson(resolved, v, path);
  }
  return scalarFromJson(field, v, path);
}

function messageFromJson(type: ReflectedType, json: unknown, path: string): Msg {
  if (json === undefined || json === null) return {};
  if (typeof json !== 'object' || Array.isArray(json)) bad(path, 'expected an object');
  const out: Msg = {};
  for (const [key, v] of Object.entries(json as Msg)) {
    const field = type.fields[camel(key)];
    if (!field) continue; // protojson's DiscardUnknown, as grpc-gateway is usually configured
    field.resolve();
    if (v === null) continue;
    const at = `${path}.${field.name}`;
    if (field.map) {
      out[field.name] = Object.fromEntries(Object.entries(v as Msg).map(([k, item]) => [k, valueFromJson(field, item, at)]));
    } else if (field.repeated) {
      out[field.name] = (Array.isArray(v) ? v : [v]).map((item) => valueFromJson(field, item, at));
    } else {
      out[field.name] = valueFromJson(field, v, at);
    }
  }
  return out;
}
