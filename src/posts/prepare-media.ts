import type { StoredMediaRef } from '../db/tables/posts';
import { ApiError } from '../errors';
import { ingestMediaUrl, type MediaRecord } from '../media';
import { accountPrefix, isUploadRef, validateMediaContents, type MediaRef, type MediaSpelling, type RuleAccount, type RuleMode, type ConfigurationBlock } from './rules';
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

export async function prepareMedia(
  rt: PostsRuntime,
  input: { userId: string; entries: readonly MediaPlanEntry[]; mode: RuleMode; fanOut: boolean },
): Promise<PreparedMedia> {
  const downloads = new Map<string, Promise<MediaRecord>>();
  const downloaded: string[] = [];
  const ingest = (url: string) => {
    let pending = downloads.get(url);
    if (!pending) {
      pending = ingestMediaUrl({ store: rt.mediaStore, http: rt.http, allowInsecureUrls: rt.config.allowInsecureUrls }, { userId: input.userId, url, origin: 'url' });
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
            entry.media.map(async (ref): Promise<{ ref: StoredMediaRef; record: MediaRecord | null }> => {
              const alt = ref.alt === undefined ? {} : { alt: ref.alt };
              if (isUploadRef(ref)) {
                const record = await rt.mediaStore.describeForUser(input.userId, ref.id);
                return { ref: { media_id: record.id, ...alt }, record };
              }
              if (input.mode === 'draft') return { ref: { url: ref.url, ...alt }, record: null };
              const record = await ingest(ref.url);
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
