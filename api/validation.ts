import { z } from 'zod';
import { apiErrorFromZod, type InputPart } from '../src/posts/rules/zod-error';

/**
 * Validates one part of a request; a failure is 400 `bad_request` worded by the one zod formatter (`apiErrorFromZod`).
 * Bodies keep each issue's input, so a missing field reads "is required" and a refused one (`scheduled_at`) says
 * what to send instead.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: InputPart): z.output<S> {
  const result = schema.safeParse(value, { reportInput: where === 'body' });
  if (result.success) return result.data;
  throw apiErrorFromZod(result.error, where);
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
