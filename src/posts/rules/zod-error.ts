import type { z } from 'zod';
import { ApiError } from '../../errors';

/**
 * The one place a zod failure on a posts or threads body becomes a client error: 400 `bad_request` whose message
 * names the field the way a client writes it (`posts[0].text is required`, `Unknown field: foo`,
 * `account_ids[2]: must be a UUID`). Unknown fields are reported before anything else, so a client who misspelt a
 * field hears about that first.
 */
export function bodyErrorFromZod(error: z.ZodError): ApiError {
  const issues = [...error.issues].sort((a, b) => rank(a) - rank(b));
  return new ApiError('bad_request', describeIssue(issues[0]));
}

/** Parses `value` with `schema` (inputs are reported, so a missing field reads "is required") or throws `bodyErrorFromZod`. */
export function parseBody<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw bodyErrorFromZod(result.error);
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
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

function describeIssue(issue: z.core.$ZodIssue | undefined): string {
  if (!issue) return 'Request body is not valid';
  const field = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => (field ? `${field}.${key}` : key));
    return `Unknown field${keys.length > 1 ? 's' : ''}: ${keys.join(', ')}`;
  }
  if (issue.code === 'invalid_type' && issue.input === undefined && !isRefusedField(issue)) {
    return field ? `${field} is required` : 'A JSON object body is required';
  }
  if (!field) return `Request body: ${issue.message}`;
  return `${field}: ${issue.message}`;
}
