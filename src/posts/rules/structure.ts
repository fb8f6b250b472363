import { MAX_FANOUT_ACCOUNTS } from '../../platforms/capabilities';
import type { MediaSpelling } from './inputs';
import { formatCount, listWords, violation, type Violation } from './violation';

/**
 * Rules between the fields of a create body that hold whatever the accounts are. They refuse drafts too
 * (publishing-api.md "Drafts behaviour" 2), so they return a list the caller throws the first of.
 */

interface AccountSelectionFields {
  account_id?: string;
  account_ids?: string[];
  account_configurations?: Record<string, unknown>;
}

type MediaFields = Partial<Record<MediaSpelling, unknown[]>>;

const spellings: readonly MediaSpelling[] = ['media', 'media_ids', 'media_urls'];

/** account_id xor account_ids; 1 to 25 ids; no duplicates; account_configurations only with account_ids, keys within them. */
export function checkAccountSelection(body: AccountSelectionFields): Violation[] {
  const out: Violation[] = [];
  if (body.account_id !== undefined && body.account_ids !== undefined) {
    out.push(violation('bad_request', 'Send either account_id or account_ids, not both'));
  } else if (body.account_id === undefined && body.account_ids === undefined) {
    out.push(violation('bad_request', 'account_id or account_ids is required'));
  }
  const ids = body.account_ids;
  if (ids !== undefined) {
    if (ids.length === 0) out.push(violation('bad_request', 'account_ids needs at least 1 account id'));
    if (ids.length > MAX_FANOUT_ACCOUNTS) {
      out.push(
        violation('bad_request', `account_ids accepts at most ${MAX_FANOUT_ACCOUNTS} account ids; got ${formatCount(ids.length)}`),
      );
    }
    const seen = new Set<string>();
    const duplicate = ids.find((id) => (seen.has(id.toLowerCase()) ? true : (seen.add(id.toLowerCase()), false)));
    if (duplicate !== undefined) out.push(violation('bad_request', `account_ids names ${duplicate} more than once`));
  }
  const configured = body.account_configurations;
  if (configured !== undefined) {
    if (ids === undefined) {
      out.push(violation('bad_request', 'account_configurations is accepted only with account_ids'));
    } else {
      const named = new Set(ids.map((id) => id.toLowerCase()));
      const stray = Object.keys(configured).find((key) => !named.has(key.toLowerCase()));
      if (stray !== undefined) out.push(violation('bad_request', `account_configurations key ${stray} is not in account_ids`));
    }
  }
  return out;
}

/** Which media spelling a level used, or a violation when it used more than one. `where` prefixes the message. */
export function mediaSpellingOf(fields: MediaFields, where = ''): { spelling: MediaSpelling | null; violation: Violation | null } {
  const used = spellings.filter((s) => fields[s] !== undefined);
  if (used.length > 1) {
    const prefix = where ? `${where}: ` : '';
    return {
      spelling: null,
      violation: violation('bad_request', `${prefix}use at most one of media, media_ids and media_urls; got ${listWords(used)}`),
    };
  }
  return { spelling: used[0] ?? null, violation: null };
}

/** Two media spellings at the top level, in any account_configurations entry, or in any thread part. */
export function checkMediaSpellings(body: MediaFields & { account_configurations?: Record<string, MediaFields>; posts?: MediaFields[] }): Violation[] {
  const out: Violation[] = [];
  const top = mediaSpellingOf(body).violation;
  if (top) out.push(top);
  for (const [id, entry] of Object.entries(body.account_configurations ?? {})) {
    const v = mediaSpellingOf(entry, `account_configurations.${id}`).violation;
    if (v) out.push(v);
  }
  (body.posts ?? []).forEach((part, index) => {
    const v = mediaSpellingOf(part, `posts[${index}]`).violation;
    if (v) out.push(v);
  });
  return out;
}

/** `text` is required unless a draft (an empty string is text; whether it may be empty is a per-account rule). */
function checkTextPresent(body: { text?: string; draft?: boolean }): Violation[] {
  return body.draft === true || body.text !== undefined ? [] : [violation('bad_request', 'text is required')];
}

/** Each thread part needs `text` unless a draft: `posts[0].text is required`. */
function checkThreadPartsText(body: { posts: Array<{ text?: string }>; draft?: boolean }): Violation[] {
  if (body.draft === true) return [];
  const missing = body.posts.findIndex((part) => part.text === undefined);
  return missing === -1 ? [] : [violation('bad_request', `posts[${missing}].text is required`)];
}

/** Everything above for `POST /api/v1/posts`, in the order a client should hear it. */
export function checkCreatePostStructure(body: AccountSelectionFields & MediaFields & { text?: string; draft?: boolean; account_configurations?: Record<string, MediaFields> }): Violation[] {
  return [...checkAccountSelection(body), ...checkMediaSpellings(body), ...checkTextPresent(body)];
}

/** Everything above for `POST /api/v1/threads`. */
export function checkCreateThreadStructure(body: AccountSelectionFields & { posts: Array<MediaFields & { text?: string }>; draft?: boolean }): Violation[] {
  return [...checkAccountSelection(body), ...checkMediaSpellings({ posts: body.posts }), ...checkThreadPartsText(body)];
}
