import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { MediaOrigin, MediaRow, MediaTables } from '../db/tables/media';
import { isUuid } from '../db/uuid';
import { ApiError } from '../errors';
import type { PlanName } from '../plans';
import { mediaNotFound, mediaStorageFailed } from './errors';
import type { MediaFacts } from './sniff';
import { type MediaStorage, requireRoomFor, storageOf } from './storage';

/**
 * Media kept in PostgreSQL, shared by every API process and the worker. A row describes the file; its bytes are in
 * `media_chunks`. Writing is one transaction: a failed insert leaves nothing behind and answers 503
 * `media_storage_failed`. Reading is scoped to the owner: another user's id, an unknown id or a malformed one is
 * 404 `media_not_found`.
 */

export interface MediaRecord {
  id: string;
  userId: string;
  kind: MediaFacts['kind'];
  format: MediaFacts['format'];
  mimeType: string;
  size: number;
  width: number | null;
  height: number | null;
  durationMs: number | null;
  sha256: string;
  origin: MediaOrigin;
  sourceUrl: string | null;
  createdAt: Date;
}

export interface StoredMedia extends MediaRecord {
  bytes: Buffer;
}

/** decisions.md "Media": the `data` of POST /api/v1/media. */
interface MediaApiShape {
  id: string;
  mime_type: string;
  size: number;
  width: number | null;
  height: number | null;
  duration_ms: number | null;
  created_at: string;
}

interface StoreMediaInput {
  userId: string;
  bytes: Buffer;
  facts: MediaFacts;
  origin: MediaOrigin;
  sourceUrl?: string | null;
  /** An upload's owner's plan: the file must fit in its media storage (`storage.ts`), or nothing is stored. */
  plan?: PlanName;
}

export interface MediaStore {
  store(input: StoreMediaInput): Promise<MediaRecord>;
  /** The record without its bytes, or 404 `media_not_found`. */
  describeForUser(userId: string, id: string): Promise<MediaRecord>;
  /** An upload the user keeps (what a client may name in a post), or 404 `media_not_found`. */
  describeUpload(userId: string, id: string): Promise<MediaRecord>;
  /** How much of the plan's media storage the user's uploads take. */
  storageOf(userId: string, plan: PlanName): Promise<MediaStorage>;
  /** The uploads the user keeps, newest first. */
  listUploads(userId: string, page: { limit: number; offset: number }): Promise<MediaRecord[]>;
  /** The record and its bytes, or 404 `media_not_found`. */
  loadForUser(userId: string, id: string): Promise<StoredMedia>;
  /** By id alone, for the worker and the signed public route; null when absent. */
  findById(id: string): Promise<MediaRecord | null>;
  /** The bytes chunk by chunk, for serving without holding a large video in memory. */
  readChunks(id: string): AsyncIterable<Buffer>;
  /** True when something was deleted. With `userId`, only that user's media. */
  delete(id: string, userId?: string): Promise<boolean>;
  /** After publishing: removes the downloaded copies (origin 'url') among `ids`, never a user's uploads. Returns how many. */
  deleteDownloadedCopies(ids: readonly string[]): Promise<number>;
}

const MEDIA_CHUNK_BYTES = 1024 * 1024;
const CHUNKS_PER_INSERT = 8;

export function isMediaId(id: string): boolean {
  return isUuid(id);
}

export function createMediaStore(db: Kysely<MediaTables>, options: { chunkBytes?: number } = {}): MediaStore {
  const chunkBytes = options.chunkBytes ?? MEDIA_CHUNK_BYTES;

  async function findById(id: string): Promise<MediaRecord | null> {
    if (!isMediaId(id)) return null;
    const row = await db.selectFrom('media').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toMediaRecord(row) : null;
  }

  async function describeForUser(userId: string, id: string): Promise<MediaRecord> {
    const record = await findById(id);
    if (!record || record.userId !== userId) throw mediaNotFound(id);
    return record;
  }

  async function* readChunks(id: string): AsyncIterable<Buffer> {
    // One chunk per query: memory stays at one chunk however large the file.
    for (let seq = 0; ; seq++) {
      const chunk = await db.selectFrom('media_chunks').select('data').where('media_id', '=', id).where('seq', '=', seq).executeTakeFirst();
      if (!chunk) return;
      yield chunk.data;
    }
  }

  return {
    findById,
    describeForUser,
    readChunks,

    async describeUpload(userId, id) {
      const record = await describeForUser(userId, id);
      if (record.origin !== 'upload') throw mediaNotFound(id);
      return record;
    },

    storageOf: (userId, plan) => storageOf(db, userId, plan),

    async listUploads(userId, page) {
      const rows = await db
        .selectFrom('media')
        .selectAll()
        .where('user_id', '=', userId)
        .where('origin', '=', 'upload')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(page.limit)
        .offset(page.offset)
        .execute();
      return rows.map(toMediaRecord);
    },

    async store(input) {
      const { bytes, facts } = input;
      const chunks: Buffer[] = [];
      for (let offset = 0; offset < bytes.length; offset += chunkBytes) chunks.push(bytes.subarray(offset, offset + chunkBytes));
      try {
        const row = await db.transaction().execute(async (trx) => {
          const inserted = await trx
            .insertInto('media')
            .values({
              user_id: input.userId,
              kind: facts.kind,
              format: facts.format,
              mime_type: facts.mimeType,
              size: bytes.length,
              width: facts.width,
              height: facts.height,
              duration_ms: facts.durationMs,
              sha256: createHash('sha256').update(bytes).digest('hex'),
              origin: input.origin,
              source_url: input.sourceUrl ?? null,
              chunk_count: chunks.length,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          for (let first = 0; first < chunks.length; first += CHUNKS_PER_INSERT) {
            const batch = chunks.slice(first, first + CHUNKS_PER_INSERT).map((data, i) => ({ media_id: inserted.id, seq: first + i, data }));
            await trx.insertInto('media_chunks').values(batch).execute();
          }
          if (input.plan !== undefined) await requireRoomFor(trx, input.userId, input.plan, bytes.length);
          return inserted;
        });
        return toMediaRecord(row);
      } catch (err) {
        if (err instanceof ApiError) throw err;
        throw Object.assign(mediaStorageFailed(), { cause: err });
      }
    },

    async loadForUser(userId, id) {
      const record = await describeForUser(userId, id);
      const parts: Buffer[] = [];
      for await (const chunk of readChunks(id)) parts.push(chunk);
      const bytes = Buffer.concat(parts);
      // Deleted between the two reads: as absent as if it had never been there.
      if (bytes.length !== record.size) throw mediaNotFound(id);
      return { ...record, bytes };
    },

    async delete(id, userId) {
      if (!isMediaId(id)) return false;
      let query = db.deleteFrom('media').where('id', '=', id);
      if (userId !== undefined) query = query.where('user_id', '=', userId);
      const result = await query.executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async deleteDownloadedCopies(ids) {
      const valid = ids.filter(isMediaId);
      if (valid.length === 0) return 0;
      const result = await db.deleteFrom('media').where('id', 'in', valid).where('origin', '=', 'url').executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export function toMediaApiShape(record: MediaRecord): MediaApiShape {
  return {
    id: record.id,
    mime_type: record.mimeType,
    size: record.size,
    width: record.width,
    height: record.height,
    duration_ms: record.durationMs,
    created_at: record.createdAt.toISOString(),
  };
}

export function toMediaRecord(row: MediaRow): MediaRecord {
  return {
    id: row.id,
    userId: row.user_id,
    kind: row.kind,
    format: row.format,
    mimeType: row.mime_type,
    size: row.size,
    width: row.width,
    height: row.height,
    durationMs: row.duration_ms,
    sha256: row.sha256,
    origin: row.origin,
    sourceUrl: row.source_url,
    createdAt: row.created_at,
  };
}
