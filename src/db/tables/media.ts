import type { ColumnType, Generated, Selectable } from 'kysely';
import type { ImageFormat, VideoFormat } from '../../platforms/capabilities';

/** 'upload': from POST /api/v1/media, kept for reuse. 'url': a downloaded copy of a post's `media_urls`, removed after publishing. */
export type MediaOrigin = 'upload' | 'url';

interface MediaTable {
  id: Generated<string>;
  user_id: string;
  kind: 'image' | 'video';
  format: ImageFormat | VideoFormat;
  mime_type: string;
  size: number;
  width: number | null;
  height: number | null;
  duration_ms: number | null;
  /** Hex SHA-256 of the whole file. */
  sha256: string;
  origin: MediaOrigin;
  source_url: string | null;
  chunk_count: number;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

/** The bytes of one media item, in order, each at most 1 MiB. */
interface MediaChunksTable {
  media_id: string;
  seq: number;
  data: Buffer;
}

export interface MediaTables {
  media: MediaTable;
  media_chunks: MediaChunksTable;
}

export type MediaRow = Selectable<MediaTable>;
