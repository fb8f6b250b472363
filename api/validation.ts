import { z } from 'zod';
import { ApiError } from '../src/errors';
import { bodyErrorFromZod } from '../src/posts/rules/zod-error';

/**
 * The one place a zod failure becomes a client error: 400 `bad_request` whose message names the field
 * (`limit: must be at most 100`, `Unknown field: scheduled_at`). `where` says which part of the request it was.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'path'): z.output<S> {
  // Bodies keep each issue's input, so a missing field reads "is required" and a refused one (`scheduled_at`) says
  // what to send instead; their messages come from the one body formatter (`bodyErrorFromZod`).
  const result = schema.safeParse(value, { reportInput: where === 'body' });
  if (result.success) return result.data;
  throw where === 'body' ? bodyErrorFromZod(result.error) : zodToApiError(result.error, where);
}

export function zodToApiError(error: z.ZodError, where: 'body' | 'query' | 'path'): ApiError {
  const issue = error.issues[0];
  return new ApiError('bad_request', describeIssue(issue, where));
}

const noun = { body: 'field', query: 'query parameter', path: 'path parameter' } as const;

function describeIssue(issue: z.core.$ZodIssue, where: 'body' | 'query' | 'path'): string {
  const field = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => (field ? `${field}.${key}` : key));
    return `Unknown ${noun[where]}${keys.length > 1 ? 's' : ''}: ${keys.join(', ')}`;
  }
  if (issue.code === 'invalid_type' && / received undefined$/.test(issue.message)) {
    return field ? `${field} is required` : `A JSON ${where === 'body' ? 'body' : where} is required`;
  }
  if (!field) return where === 'body' ? `Request body: ${issue.message}` : issue.message;
  return `${field}: ${issue.message}`;
}

/** Query flags: only the words `true` and `false`. */
export const queryBoolean = z
  .enum(['true', 'false'], { error: 'must be true or false' })
  .transform((value) => value === 'true');

/** A non-negative integer written in decimal, as query strings carry numbers. */
export function queryInteger(options: { min: number; max?: number }) {
  const range = options.max === undefined ? `at least ${options.min}` : `between ${options.min} and ${options.max}`;
  return z
    .string({ error: `must be an integer ${range}` })
    .regex(/^\d{1,9}$/, `must be an integer ${range}`)
    .transform(Number)
    .refine((n) => n >= options.min && (options.max === undefined || n <= options.max), `must be an integer ${range}`);
}
