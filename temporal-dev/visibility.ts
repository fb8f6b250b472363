// Visibility: what List/Count/Describe show about a run, and the small SQL-like query language an operator
// uses (comparisons, IN, BETWEEN, IS [NOT] NULL, AND, OR, parentheses; ORDER BY is accepted and ignored).
import { invalidArgument } from './errors';
import { timestamp, WorkflowStatus, type Msg } from './proto';
import type { Run } from './run';

const STATUS_NAMES: Record<number, string> = {
  [WorkflowStatus.RUNNING!]: 'Running',
  [WorkflowStatus.COMPLETED!]: 'Completed',
  [WorkflowStatus.FAILED!]: 'Failed',
  [WorkflowStatus.CANCELED!]: 'Canceled',
  [WorkflowStatus.TERMINATED!]: 'Terminated',
  [WorkflowStatus.CONTINUED_AS_NEW!]: 'ContinuedAsNew',
  [WorkflowStatus.TIMED_OUT!]: 'TimedOut',
};

const TIME_FIELDS = new Set(['StartTime', 'CloseTime', 'ExecutionTime']);

function decodePayload(p: Msg | undefined): unknown {
  if (!p?.data) return undefined;
  try {
    return JSON.parse(Buffer.from(p.data).toString('utf8'));
  } catch {
    return Buffer.from(p.data).toString('utf8');
  }
}

export function mergeSearchAttributes(target: Record<string, Msg>, fields: Record<string, Msg>): void {
  for (const [key, payload] of Object.entries(fields)) {
    const value = decodePayload(payload);
    if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) delete target[key];
    else target[key] = payload;
  }
}

export function executionInfo(run: Run): Msg {
  // Only a child's start event is decoded (the parent's namespace id is there); most runs have no parent.
  const started = run.parent ? run.started : undefined;
  const { memo, searchAttributes } = run.properties; // one read of the history for both
  return {
    execution: run.execution,
    type: { name: run.workflowType },
    startTime: timestamp(run.startTime),
    closeTime: run.closeTime ? timestamp(run.closeTime) : undefined,
    status: run.status,
    historyLength: run.eventCount,
    parentNamespaceId: started?.parentWorkflowNamespaceId,
    parentExecution: started?.parentWorkflowExecution,
    executionTime: timestamp(run.executionTime),
    memo: { fields: memo },
    searchAttributes: { indexedFields: searchAttributes },
    taskQueue: run.taskQueue,
    stateTransitionCount: run.eventCount,
    historySizeBytes: run.historySizeBytes,
    firstRunId: run.firstExecutionRunId,
    executionDuration: run.closeTime ? { seconds: Math.floor((run.closeTime - run.startTime) / 1000), nanos: 0 } : undefined,
  };
}

function fieldValue(run: Run, field: string): unknown {
  switch (field) {
    case 'WorkflowId':
      return run.workflowId;
    case 'RunId':
      return run.runId;
    case 'WorkflowType':
      return run.workflowType;
    case 'TaskQueue':
      return run.taskQueue;
    case 'ExecutionStatus':
      return STATUS_NAMES[run.status];
    case 'StartTime':
      return run.startTime;
    case 'CloseTime':
      return run.closeTime || undefined;
    case 'ExecutionTime':
      return run.executionTime;
    case 'HistoryLength':
      return run.eventCount;
    default:
      return decodePayload(run.searchAttributes[field]);
  }
}

type Predicate = (run: Run) => boolean;

function tokenize(query: string): string[] {
  const tokens: string[] = [];
  const re = /\s*(?:('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`)|(>=|<=|!=|<>|=|>|<|\(|\)|,)|([A-Za-z_][\w.]*|[-+]?\d+(?:\.\d+)?))/y;
  let pos = 0;
  while (pos < query.length) {
    if (/^\s*$/.test(query.slice(pos))) break;
    re.lastIndex = pos;
    const m = re.exec(query);
    if (!m) throw invalidArgument(`invalid query: unexpected input at ${pos}: ${query.slice(pos, pos + 20)}`);
    tokens.push(m[1] ?? m[2] ?? m[3]!);
    pos = re.lastIndex;
  }
  return tokens;
}

function literal(token: string | undefined): unknown {
  if (token === undefined) throw invalidArgument('invalid query: missing value');
  if (/^['"]/.test(token)) return token.slice(1, -1).replace(/\\(.)/g, '$1');
  if (/^[-+]?\d/.test(token)) return Number(token);
  if (/^(true|false)$/i.test(token)) return token.toLowerCase() === 'true';
  throw invalidArgument(`invalid query: expected a value, got ${token}`);
}

function compare(field: string, actual: unknown, op: string, expected: unknown): boolean {
  if (actual === undefined) return op === '!=' || op === '<>';
  let a = actual;
  let e = expected;
  if (TIME_FIELDS.has(field) && typeof e === 'string') {
    e = Date.parse(e);
    if (Number.isNaN(e)) throw invalidArgument(`invalid query: ${field} needs a date, got ${String(expected)}`);
  }
  if (Array.isArray(a)) {
    const has = a.includes(e);
    return op === '=' ? has : op === '!=' || op === '<>' ? !has : false;
  }
  if (typeof a === 'number' && typeof e === 'string' && !Number.isNaN(Number(e))) e = Number(e);
  if (typeof a !== typeof e) a = String(a);
  const x = a as number | string;
  const y = e as number | string;
  switch (op) {
    case '=':
      return x === y;
    case '!=':
    case '<>':
      return x !== y;
    case '>':
      return x > y;
    case '>=':
      return x >= y;
    case '<':
      return x < y;
    case '<=':
      return x <= y;
  }
  throw invalidArgument(`invalid query: unknown operator ${op}`);
}

export function parseQuery(query: string | undefined): Predicate {
  const text = (query ?? '').replace(/\border\s+by\b[\s\S]*$/i, '').trim();
  if (!text) return () => true;
  const tokens = tokenize(text);
  let i = 0;
  const peek = () => tokens[i];
  const next = () => tokens[i++];
  const isWord = (w: string) => peek()?.toUpperCase() === w;

  function primary(): Predicate {
    if (peek() === '(') {
      next();
      const inner = orExpr();
      if (next() !== ')') throw invalidArgument('invalid query: missing )');
      return inner;
    }
    const field = next()?.replace(/^`|`$/g, '');
    if (!field) throw invalidArgument('invalid query: missing field');
    if (isWord('IN') || (isWord('NOT') && tokens[i + 1]?.toUpperCase() === 'IN')) {
      const negate = isWord('NOT');
      if (negate) next();
      next();
      if (next() !== '(') throw invalidArgument('invalid query: IN needs (');
      const values: unknown[] = [];
      while (peek() !== ')') {
        values.push(literal(next()));
        if (peek() === ',') next();
        else if (peek() !== ')') throw invalidArgument('invalid query: bad IN list');
      }
      next();
      return (run) => values.some((v) => compare(field, fieldValue(run, field), '=', v)) !== negate;
    }
    if (isWord('IS')) {
      // `IS NULL` / `IS NOT NULL`: whether the run has the attribute at all (Temporal 1.20+ visibility).
      next();
      const negate = isWord('NOT');
      if (negate) next();
      if (!isWord('NULL')) throw invalidArgument('invalid query: IS needs NULL or NOT NULL');
      next();
      return (run) => (fieldValue(run, field) === undefined) !== negate;
    }
    if (isWord('BETWEEN')) {
      next();
      const lo = literal(next());
      if (!isWord('AND')) throw invalidArgument('invalid query: BETWEEN needs AND');
      next();
      const hi = literal(next());
      return (run) => compare(field, fieldValue(run, field), '>=', lo) && compare(field, fieldValue(run, field), '<=', hi);
    }
    const op = next();
    if (!op || !['=', '!=', '<>', '>', '>=', '<', '<='].includes(op)) throw invalidArgument(`invalid query: bad operator after ${field}`);
    const value = literal(next());
    return (run) => compare(field, fieldValue(run, field), op, value);
  }

  function andExpr(): Predicate {
    let left = primary();
    while (isWord('AND')) {
      next();
      const l = left;
      const r = primary();
      left = (run) => l(run) && r(run);
    }
    return left;
  }

  function orExpr(): Predicate {
    let left = andExpr();
    while (isWord('OR')) {
      next();
      const l = left;
      const r = andExpr();
      left = (run) => l(run) || r(run);
    }
    return left;
  }

  const predicate = orExpr();
  if (i < tokens.length) throw invalidArgument(`invalid query: unexpected ${tokens[i]}`);
  return predicate;
}

export const BUILTIN_SEARCH_ATTRIBUTES: Record<string, number> = {
  WorkflowId: 2,
  RunId: 2,
  WorkflowType: 2,
  ExecutionStatus: 2,
  TaskQueue: 2,
  StartTime: 6,
  CloseTime: 6,
  ExecutionTime: 6,
  HistoryLength: 3,
  ExecutionDuration: 3,
  BuildIds: 7,
  TemporalChangeVersion: 7,
};
