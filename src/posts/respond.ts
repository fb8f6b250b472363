import type { AccountRow } from '../db/tables/accounts';
import { platformRefusal, type FanOut, type PlatformRefusal } from './outcomes';
import type { PostView } from './post-view';
import { loadPostViews } from './view-queries';
import type { WarningEntry } from './rules';
import type { PostsRuntime } from './runtime';

export interface CreatedPost {
  id: string;
  account: Pick<AccountRow, 'id' | 'platform'>;
}

/** One account's result in a fan-out answer (publishing-api.md "Responses"). */
interface PostResult {
  account_id: string;
  platform: string;
  success: boolean;
  post_id: string;
  platform_post_url: string | null;
  status: PostView['status'];
  post: PostView;
  error: { code: 'upstream_error' | 'internal_error'; message: string } | null;
}

/** A create or a promotion: the post (one account), its refusal by the platform (the row is kept `failed`), or a fan-out. */
export type PublishOutcome = { kind: 'created'; post: PostView } | PlatformRefusal | FanOut<PostResult>;

/** A post is a success of its request unless the platform refused it (`failed`). */
function succeeded(view: PostView): boolean {
  return view.status !== 'failed';
}

function withWarnings(view: PostView, warnings: readonly WarningEntry[]): PostView {
  return { ...view, warnings: warnings.filter((w) => w.account_id === view.account_id) };
}

/**
 * The outcome of a create or a promotion, from the rows as they stand once the workflows answered: one account → the
 * post, or the platform's sentence when it refused; `account_ids` → one result per account in the order named.
 * Drafts carry `warnings`.
 */
export async function publishOutcome(
  rt: Pick<PostsRuntime, 'db'>,
  input: {
    created: readonly CreatedPost[];
    fanOut: boolean;
    groupId: string | null;
    draft: boolean;
    warnings: readonly WarningEntry[];
    views?: readonly PostView[];
    /** Posts of a fan-out whose workflow Temporal refused to start (`runWorkflows`): failed by Herald, not the platform. */
    unstarted?: ReadonlySet<string>;
  },
): Promise<PublishOutcome> {
  // Views this process's worker recorded (`PostChangeFeed.recording`) are the rows as committed: no read for them.
  const views = input.views ?? (await loadPostViews(rt.db, input.created.map((c) => c.id)));
  const shaped = views.map((view) => (input.draft ? withWarnings(view, input.warnings) : view));
  if (!input.fanOut) {
    const view = shaped[0]!;
    return succeeded(view) ? { kind: 'created', post: view } : platformRefusal(view.error_message ?? 'The platform refused the post');
  }
  const results = shaped.map((view, i): PostResult => {
    const ok = succeeded(view);
    return {
      account_id: input.created[i]!.account.id,
      platform: input.created[i]!.account.platform,
      success: ok,
      post_id: view.id,
      platform_post_url: view.platform_post_url,
      status: view.status,
      post: view,
      error: ok ? null : { code: input.unstarted?.has(view.id) ? 'internal_error' : 'upstream_error', message: view.error_message ?? 'The platform refused the post' },
    };
  });
  return { kind: 'fan_out', groupId: input.groupId, results };
}
