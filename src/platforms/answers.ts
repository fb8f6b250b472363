import type { z } from 'zod';
import { platformName } from './availability';
import { PlatformFailure, type PlatformSlug } from './types';

/**
 * What an adapter reads of a platform's answer is checked against a schema before it is used: a 2xx answer of another
 * shape (an HTML page, `{}`, a server that is not the platform) is a permanent refusal with the adapter's sentence,
 * never fields read as `undefined` (an account once stored as "undefined@host") or a TypeError (a 500).
 */
/** The refusal of a `verify` whose account lookup answered in another shape. */
export const unknownIdentityAnswer = (platform: PlatformSlug) => `${platformName(platform)} answered the account lookup in a shape Herald does not know; nothing was connected.`;

export function answerOf<S extends z.ZodType>(platform: PlatformSlug, schema: S, answer: unknown, refusal: string): z.output<S> {
  const parsed = schema.safeParse(answer);
  if (parsed.success) return parsed.data;
  // For logs only: where the answer differs, never the answer itself.
  const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(answer)'}: ${issue.message}`).join('; ');
  throw new PlatformFailure(platform, 'permanent', refusal, undefined, { body: issues.slice(0, 500) });
}
