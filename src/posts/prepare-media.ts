import type { StoredMediaRef } from '../db/tables/posts';
import { ApiError } from '../errors';
import { ingestMediaUrl, type MediaRecord } from '../media';
import { isUrlRefusal } from '../media/errors';
import { largestFileOf } from '../media/limits';
import { platformName } from '../platforms/availability';
import { accountPrefix, isUploadRef, mediaItemPath, validateMediaContents, type MediaRef, type MediaSpelling, type RuleAccount, type RuleMode, type ConfigurationBlock } from './rules';
import type { WarningEntry } from './rules';
import type { PostsRuntime } from './runtime';

/**
 * The media of a request made real before anything is written: upload ids must be the user's (404
 * `media_not_found`, drafts too); URLs of a post that will publish are downloaded, checked and stored now
 * (publishing-api.md "Media rules" 2 and 5), once per distinct URL however many accounts use it; then the real
 * contents are checked against every account's rules (`validateMediaContents`). A refusal removes what this request
 * downloaded. Drafts keep URLs as given (nothing is fetched for a draft) and get warnings instead of refusals.
 */
interface MediaPlanEntry {
  account: RuleAccount;
  media: MediaRef[];
  spelling: MediaSpelling | null;
  configuration: ConfigurationBlock | null;
}

export interface PreparedMedia {
  /** Per account id: what the row stores (`media_id` set for every stored file). */
  refs: Map<string, StoredMediaRef[]>;
  /** Media this request downloaded; the caller removes them if it fails later. */
  downloaded: string[];
  warnings: WarningEntry[];
}

/**
 * How many of a request's URLs download at once: each holds its bytes in memory until stored, and a request may name
 * 250 (10 for each of 25 accounts), up to 512 MiB each.
 */
const DOWNLOADS_AT_ONCE = 4;

/** A file bigger than every account of the request takes is refused while it downloads, not after. */
function downloadCapOf(entries: readonly MediaPlanEntry[]): { maxBytes: number; maxBytesOf: string } {
  const platforms = [...new Set(entries.map((entry) => entry.account.platform))];
  const maxBytes = Math.max(...platforms.map(largestFileOf));
  const names = platforms.map(platformName);
  const who = names.length === 1 ? `${names[0]} accepts` : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} accept`;
  return { maxBytes, maxBytesOf: `the largest file ${who}` };
}

/** Runs at most `count` of the calls given to it at once; the others wait their turn, in order. */
function slots(count: number): <T>(call: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (call) => {
    // A call that ends hands its slot to the next waiting one, so a call arriving meanwhile cannot take it too.
    if (running < count) running += 1;
    else await new Promise<void>((turn) => waiting.push(turn));
    try {
      return await call();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  };
}

export async function prepareMedia(
  rt: PostsRuntime,
  input: {
    userId: string;
    entries: readonly MediaPlanEntry[];
    mode: RuleMode;
    fanOut: boolean;
    /**
     * The ids a scheduled post being edited already holds: read whatever they now are (a downloaded copy, or an upload
     * deleted since, which the post still publishes). Any other id must be an upload the user keeps.
     */
    heldIds?: ReadonlySet<string>;
    /** Where these lists sit in the request: a thread part's `posts[1].`; a post's and an edit's none. */
    prefix?: string;
  },
): Promise<PreparedMedia> {
  const downloads = new Map<string, Promise<MediaRecord>>();
  const downloaded: string[] = [];
  // Made at the first URL: most creates carry none, and every create comes through here.
  let deps: Parameters<typeof ingestMediaUrl>[0] | undefined;
  const depsOf = () => (deps ??= { store: rt.mediaStore, http: rt.http, allowInsecureUrls: rt.config.allowInsecureUrls, ...downloadCapOf(input.entries) });
  const inTurn = slots(DOWNLOADS_AT_ONCE);
  const prefix = input.prefix ?? '';
  const ingest = (url: string) => {
    let pending = downloads.get(url);
    if (!pending) {
      pending = inTurn(() => ingestMediaUrl(depsOf(), { userId: input.userId, url, origin: 'url' }));
      pending.then((record) => downloaded.push(record.id)).catch(() => undefined);
      downloads.set(url, pending);
    }
    return pending;
  };

  try {
    const resolved = await Promise.all(
      input.entries.map(async (entry) => {
        try {
          return await Promise.all(
            entry.media.map(async (ref, index): Promise<{ ref: StoredMediaRef; record: MediaRecord | null }> => {
              const alt = ref.alt === undefined ? {} : { alt: ref.alt };
              if (isUploadRef(ref)) {
                const record = input.heldIds?.has(ref.id)
                  ? await rt.mediaStore.describeForUser(input.userId, ref.id)
                  : await rt.mediaStore.describeUpload(input.userId, ref.id);
                return { ref: { media_id: record.id, ...alt }, record };
              }
              if (input.mode === 'draft') return { ref: { url: ref.url, ...alt }, record: null };
              // One download may serve several items (the same URL twice, or for several accounts): each names its own.
              const record = await ingest(ref.url).catch((err: unknown) => {
                throw isUrlRefusal(err) ? err.prefixed(`${mediaItemPath(prefix, entry.spelling, index)}: `) : err;
              });
              return { ref: { url: ref.url, media_id: record.id, ...alt }, record };
            }),
          );
        } catch (err) {
          if (err instanceof ApiError) throw err.prefixed(accountPrefix(entry.account, input.fanOut));
          throw err;
        }
      }),
    );
    const warnings = validateMediaContents(
      input.entries.map((entry, index) => ({
        account: entry.account,
        configuration: entry.configuration,
        // A draft's URLs are not fetched: its contents are checked when it is promoted.
        lists: resolved[index]!.some(({ record }) => record === null)
          ? []
          : [
              {
                prefix,
                spelling: entry.spelling,
                contents: resolved[index]!.map(({ record }) => ({
                  mimeType: record!.mimeType,
                  size: record!.size,
                  width: record!.width,
                  height: record!.height,
                  kind: record!.kind,
                  durationMs: record!.durationMs,
                })),
              },
            ],
      })),
      { mode: input.mode, fanOut: input.fanOut },
    );
    const refs = new Map(input.entries.map((entry, index) => [entry.account.id, resolved[index]!.map(({ ref }) => ref)]));
    return { refs, downloaded, warnings };
  } catch (err) {
    await Promise.allSettled([...downloads.values()]);
    await rt.mediaStore.deleteDownloadedCopies(downloaded).catch(() => undefined);
    throw err;
  }
}
