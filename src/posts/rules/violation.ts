import { ApiError, PassingRefusal, type ErrorCode } from '../../errors';

/**
 * What every rule returns: the refusal a send would answer with, or nothing. One rule implementation serves both
 * modes: a send throws the first violation (`throwFirst`), a draft turns every violation into a warning entry.
 */
export interface Violation {
  code: ErrorCode;
  message: string;
  /** The same request may pass once another resource changes (the spacing rule): thrown as a `PassingRefusal`. */
  passes?: true;
}

/** Warning codes that describe a change rather than a refusal (publishing-api.md "Drafts behaviour" 3). */
export type NoticeCode = 'thread_not_native' | 'x_link_post_billed' | 'schedule_at_in_past';

export interface Notice {
  code: NoticeCode;
  message: string;
}

export function notice(code: NoticeCode, message: string): Notice {
  return { code, message };
}

export function violation(code: ErrorCode, message: string, passes?: { passes: true }): Violation {
  return passes ? { code, message, ...passes } : { code, message };
}

export function toApiError(v: Violation): ApiError {
  return v.passes ? new PassingRefusal(v.code, v.message) : new ApiError(v.code, v.message);
}

/** Throws the first violation as an `ApiError` (optionally prefixed, as fan-out validation does). */
export function throwFirst(violations: readonly Violation[], prefix = ''): void {
  const first = violations[0];
  if (first) throw toApiError(first).prefixed(prefix);
}

/** `1,024`: the numbers in messages are written the way the spec writes them. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** `a, b, c and d`. */
export function listWords(words: readonly string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}
