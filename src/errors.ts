import { z } from 'zod';

/**
 * The error catalogue of publishing-api.md ("Errors"), plus the codes decisions.md adds.
 * One table: the code, its HTTP status. Everything that answers an error imports from here.
 */
export const errorStatus = {
  bad_request: 400,
  validation_error: 400,
  unsupported_media: 400,
  first_comment_unsupported: 400,
  configuration_unsupported: 400,
  bluesky_app_password_required: 400,
  mastodon_instance_invalid: 400,
  idempotency_key_invalid: 400,
  unauthorized: 401,
  x_link_posts_require_paid_plan: 402,
  comment_read_budget_exceeded: 402,
  insufficient_scope: 403,
  not_found: 404,
  media_not_found: 404,
  first_comment_not_found: 404,
  post_not_editable: 409,
  first_comment_not_retryable: 409,
  comment_permission_required: 409,
  idempotency_in_progress: 409,
  idempotency_key_reused: 422,
  rate_limited: 429,
  usage_limit_exceeded: 429,
  account_limit_reached: 429,
  analytics_refresh_rate_limited: 429,
  comment_sync_rate_limited: 429,
  first_comment_rate_limited: 429,
  internal_error: 500,
  platform_coming_soon: 501,
  platform_unsupported: 501,
  comments_unsupported: 501,
  comment_action_unsupported: 501,
  delete_unsupported: 501,
  upstream_error: 502,
  first_comment_failed: 502,
  thread_rollback_incomplete: 502,
  media_storage_failed: 503,
  /** GET /readyz when a dependency (database, Temporal, worker) does not answer. Not a publishing-api.md code. */
  service_unavailable: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof errorStatus;
const errorCodes = Object.keys(errorStatus) as [ErrorCode, ...ErrorCode[]];
const ErrorCodeSchema = z.enum(errorCodes);

const ErrorEnvelopeSchema = z.object({
  error: z
    .object({
      code: ErrorCodeSchema,
      message: z.string(),
    })
    .catchall(z.unknown()),
});
type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>;

/**
 * An error a client is meant to see. Domain code throws it; the API's single error middleware turns it into the
 * envelope. `extra` holds members beside code and message (for example `thread_rollback`); `headers` holds
 * response headers the error implies (for example `Retry-After`).
 */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = errorStatus[code];
  }

  toEnvelope(): ErrorEnvelope {
    return { error: { code: this.code, message: this.message, ...this.extra } };
  }

  /** Prefix the message, as fan-out validation does with `Account <id>: `. */
  prefixed(prefix: string): ApiError {
    return new ApiError(this.code, `${prefix}${this.message}`, this.extra, this.headers);
  }
}

/**
 * A refusal that holds only until something outside the request changes: another post of the account moves (the
 * 5-minute spacing), an account is switched on or reconnected (`AccountNotActiveError`). The contract's code and body;
 * the class says only that the same request may pass later, so an idempotent request refused so is not kept for
 * replay (`api/idempotency.ts` `keptForReplay`): its retry with the same key runs again.
 */
export class PassingRefusal extends ApiError {
  override prefixed(prefix: string): PassingRefusal {
    return new PassingRefusal(this.code, `${prefix}${this.message}`, this.extra, this.headers);
  }
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}
