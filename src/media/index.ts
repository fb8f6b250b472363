/** Herald's media layer: what the bytes are, fetching them safely, keeping them, and handing them to adapters. */
export { sniffMedia, requireDecodable, detectFormat, mimeTypes, type MediaFacts, type MediaFormat, type MediaKind, type SniffResult } from './sniff';
export { checkMediaUrl, type CheckedMediaUrl, type MediaUrlHint } from './media-url';
export { downloadMedia, type DownloadOptions, type DownloadedMedia, DEFAULT_DOWNLOAD_TIMEOUT_MS, DEFAULT_MAX_REDIRECTS } from './download';
export { mediaLimits, requireWithinLimits, MAX_MEDIA_URL_LENGTH } from './limits';
export { MediaError, isMediaError, type MediaRefusalReason } from './errors';
export { createMediaStore, toMediaApiShape, isMediaId, type MediaStore, type MediaRecord, type StoredMedia, type MediaApiShape, type StoreMediaInput } from './store';
export { ingestMediaUrl, type IngestDeps } from './ingest';
export { createMediaUrlSigner, deriveMediaUrlKey, DEFAULT_MEDIA_URL_TTL_MS, type MediaUrlSigner, type MediaUrlSignerOptions } from './public-url';
export { createPublicMediaRouter } from './public-route';
export { createMediaRouter, type MediaRouterDeps } from './routes';
export { toMediaItems, type MediaAttachment } from './media-items';
