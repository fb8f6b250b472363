/**
 * What the posts and threads services answer: domain results, never HTTP. `api/routes/posts-answers.ts` turns each
 * into a status and a body in one place (201, 207, 200, 502...). Refusals of the request itself (validation,
 * not found, not editable, quota) are catalogue errors (`src/errors.ts`) and are thrown as before.
 */

/** The platform did not take a publication (a single post, a thread, a delete): the request cannot succeed. */
export interface PlatformRefusal {
  kind: 'platform_refused';
  code: 'upstream_error' | 'thread_rollback_incomplete';
  message: string;
  /** Extra members of the error (`thread_rollback`). */
  details?: Record<string, unknown>;
}

/** One result per account of a fan-out, in the order named; the request succeeded only when every one did. */
export interface FanOut<R extends { success: boolean }> {
  kind: 'fan_out';
  groupId: string | null;
  results: R[];
}

/**
 * A PATCH's outcome: the post as it now is (the new post after a promotion, with `promoted_from_draft_id(s)`,
 * `rescheduled_post_ids`, a draft's `warnings`), or the platform's refusal of a promotion that published now.
 */
export type UpdateOutcome = { kind: 'updated'; post: Record<string, unknown> } | PlatformRefusal;

export function platformRefusal(message: string, code: PlatformRefusal['code'] = 'upstream_error', details?: Record<string, unknown>): PlatformRefusal {
  return details ? { kind: 'platform_refused', code, message, details } : { kind: 'platform_refused', code, message };
}
