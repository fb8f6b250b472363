import type { AccountRow } from '../db/tables/accounts';
import { ApiError } from '../errors';
import type { PostView } from './post-view';
import { loadPostViews } from './repository';
import type { WarningEntry } from './rules';
import type { RouteResult } from './route-result';
import type { PostsRuntime } from './runtime';

export interface CreatedPost {
  id: string;
  account: Pick<AccountRow, 'id' | 'platform'>;
}

/** A post is a success of its request unless the platform refused it (`failed`). */
function succeeded(view: PostView): boolean {
  return view.status !== 'failed';
}

function withWarnings(view: PostView, warnings: readonly WarningEntry[]): PostView {
  return { ...view, warnings: warnings.filter((w) => w.account_id === view.account_id) };
}

/**
 * The answer to a create or a promotion, from the rows as they stand once the workflows answered
 * (publishing-api.md "Responses"): one account → 201 `{ data: post }`, or 502 `upstream_error` with the platform's
 * sentence when it refused (the row is kept as `failed`); `account_ids` → 201 when every account succeeded, else 207,
 * one result per account in the order named. Drafts carry `warnings`.
 */
export async function publishOutcomeResponse(
  rt: Pick<PostsRuntime, 'db'>,
  input: { created: readonly CreatedPost[]; fanOut: boolean; groupId: string | null; draft: boolean; warnings: readonly WarningEntry[]; extra?: Partial<PostView> },
): Promise<RouteResult> {
  const views = await loadPostViews(rt.db, input.created.map((c) => c.id));
  const shaped = views.map((view) => ({ ...(input.draft ? withWarnings(view, input.warnings) : view), ...input.extra }));
  if (!input.fanOut) {
    const view = shaped[0]!;
    if (!succeeded(view)) throw new ApiError('upstream_error', view.error_message ?? 'The platform refused the post');
    return { status: 201, body: { data: view } };
  }
  const results = shaped.map((view, i) => {
    const ok = succeeded(view);
    return {
      account_id: input.created[i]!.account.id,
      platform: input.created[i]!.account.platform,
      success: ok,
      post_id: view.id,
      platform_post_url: view.platform_post_url,
      status: view.status,
      post: view,
      error: ok ? null : { code: 'upstream_error', message: view.error_message ?? 'The platform refused the post' },
    };
  });
  return { status: results.every((r) => r.success) ? 201 : 207, body: { data: { group_id: input.groupId, results } } };
}
