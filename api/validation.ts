import { z } from 'zod';
import { isUuid } from '../src/db/uuid';
import { refuseNul } from '../src/nul-input';
import { apiErrorFromZod, type InputPart } from '../src/posts/rules/zod-error';

/**
 * Validates one part of a request; a failure is 400 `bad_request` worded by the one zod formatter (`apiErrorFromZod`).
 * Bodies keep each issue's input, so a missing field reads "is required" and a refused one (`scheduled_at`) says
 * what to send instead.
 *
 * A NUL character is refused first, in any string or member name of any part, whatever the schema says of it:
 * PostgreSQL cannot store or compare one in `text` or `jsonb` (every stored or filtered string would otherwise be a
 * 500), and no field of the API means one. Checked before the schema so the answer names that field even when
 * others are missing.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: InputPart): z.output<S> {
  refuseNul(value, where);
  const result = schema.safeParse(value, { reportInput: where === 'body' });
  if (result.success) return result.data;
  throw apiErrorFromZod(result.error, where);
}

/**
 * A resource id in the path (`/posts/:id`, `:comment_id`): every route declares its ids with this. Anything is
 * accepted here: a malformed id names no resource, so the repository's `isUuid` check answers 404 `not_found` like an
 * absent one (src/db/uuid.ts; publishing-api.md "Resource absent"). A UUID is lower-cased, the form Herald writes, so
 * `/posts/<ID>` and `/posts/<id>` are one resource and one request (the idempotency fingerprint takes parsed params).
 */
export const pathId = z.string().transform((id) => (isUuid(id) ? id.toLowerCase() : id));

/** The params of a route whose one path parameter is `:id`. */
export const idParams = z.strictObject({ id: pathId });

/** Query flags: only the words `true` and `false`. */
export const queryBoolean = z
  .enum(['true', 'false'], { error: 'must be true or false' })
  .transform((value) => value === 'true')
  .meta({ type: 'boolean' }); // the document shows what it parses to, as the contract's tables type it

/** A non-negative integer written in decimal, as query strings carry numbers. Documented as the integer it is. */
export function queryInteger(options: { min: number; max?: number }) {
  const range = options.max === undefined ? `at least ${options.min}` : `between ${options.min} and ${options.max}`;
  return z
    .string({ error: `must be an integer ${range}` })
    .regex(/^\d{1,9}$/, `must be an integer ${range}`)
    .transform(Number)
    .refine((n) => n >= options.min && (options.max === undefined || n <= options.max), `must be an integer ${range}`)
    .meta({ type: 'integer', minimum: options.min, ...(options.max === undefined ? {} : { maximum: options.max }) });
}
