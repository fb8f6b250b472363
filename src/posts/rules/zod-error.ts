import type { z } from 'zod';
import { ApiError } from '../../errors';

/**
 * The one place a zod failure becomes a client error (request bodies, query strings and path parameters alike):
 * 400 `bad_request` whose message names the field the way a client writes it (`posts[0].text is required`,
 * `Unknown field: foo`, `account_ids[2]: must be a UUID`, `limit: must be at most 100`). In a body, unknown fields
 * are reported before anything else, so a client who misspelt a field hears about that first. Kept beside the post
 * rules because their schemas are its main caller; `api/validation.ts` uses it for every route.
 */
export type InputPart = 'body' | 'query' | 'path';

const noun = { body: 'field', query: 'query parameter', path: 'path parameter' } as const;

export function apiErrorFromZod(error: z.ZodError, where: InputPart = 'body'): ApiError {
  const issues = where === 'body' ? [...error.issues].sort((a, b) => rank(a) - rank(b)) : error.issues;
  return new ApiError('bad_request', describeIssue(issues[0], where));
}

/** Parses `value` with `schema` (inputs are reported, so a missing field reads "is required") or throws `apiErrorFromZod`. */
export function parseBody<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw apiErrorFromZod(result.error, 'body');
}

function rank(issue: z.core.$ZodIssue): number {
  if (issue.code === 'unrecognized_keys') return 0;
  if (isRefusedField(issue)) return 1;
  return 2;
}

function isRefusedField(issue: z.core.$ZodIssue): boolean {
  return issue.path.length === 1 && (issue.path[0] === 'scheduled_at' || issue.path[0] === 'group_id');
}

/** `posts[0].text`, `account_configurations.<id>.media[1].url`. */
function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/**
 * A body is parsed with its inputs reported, so a missing field is one whose input is undefined (a refused field such
 * as `scheduled_at` says what to send instead); query strings and paths are not, so their zod message tells.
 */
function isMissing(issue: z.core.$ZodIssue, where: InputPart): boolean {
  if (issue.code !== 'invalid_type') return false;
  return where === 'body' ? issue.input === undefined && !isRefusedField(issue) : / received undefined$/.test(issue.message);
}

function describeIssue(issue: z.core.$ZodIssue | undefined, where: InputPart): string {
  if (!issue) return 'Request body is not valid';
  const field = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => (field ? `${field}.${key}` : key));
    return `Unknown ${noun[where]}${keys.length > 1 ? 's' : ''}: ${keys.join(', ')}`;
  }
  if (isMissing(issue, where)) return field ? `${field} is required` : where === 'body' ? 'A JSON object body is required' : `A JSON ${where} is required`;
  if (!field) return where === 'body' ? `Request body: ${issue.message}` : issue.message;
  return `${field}: ${issue.message}`;
}
