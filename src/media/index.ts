/** Herald's media layer: what the bytes are, fetching them safely, keeping them, and handing them to adapters. */
export { createMediaStore, type MediaStore, type MediaRecord } from './store';
export { ingestMediaUrl } from './ingest';
export { createMediaUrlSigner, deriveMediaUrlKey, DEFAULT_MEDIA_URL_TTL_MS, type MediaUrlSigner } from './public-url';
export { createPublicMediaRouter } from './public-route';
export { createMediaRouter } from './routes';
export { toMediaItems } from './media-items';
