import type { ImageFormat, VideoFormat } from '../../platforms/capabilities';

/** What a media item is, as far as the rules can tell: its kind and format, or `format: null` when no platform takes it. */
export interface MediaNature {
  kind: 'image' | 'video';
  format: ImageFormat | VideoFormat | null;
  /** How messages name it: `JPEG`, `MOV`, `HEIC`, `image/avif`. */
  name: string;
}

const formatNames: Readonly<Record<ImageFormat | VideoFormat, string>> = {
  jpeg: 'JPEG', png: 'PNG', webp: 'WebP', gif: 'GIF', mp4: 'MP4', mov: 'MOV',
};

export function formatName(format: ImageFormat | VideoFormat): string {
  return formatNames[format];
}

const byExtension: Readonly<Record<string, MediaNature>> = {
  jpg: { kind: 'image', format: 'jpeg', name: 'JPEG' },
  jpeg: { kind: 'image', format: 'jpeg', name: 'JPEG' },
  jfif: { kind: 'image', format: 'jpeg', name: 'JPEG' },
  png: { kind: 'image', format: 'png', name: 'PNG' },
  webp: { kind: 'image', format: 'webp', name: 'WebP' },
  gif: { kind: 'image', format: 'gif', name: 'GIF' },
  heic: { kind: 'image', format: null, name: 'HEIC' },
  heif: { kind: 'image', format: null, name: 'HEIF' },
  avif: { kind: 'image', format: null, name: 'AVIF' },
  bmp: { kind: 'image', format: null, name: 'BMP' },
  tif: { kind: 'image', format: null, name: 'TIFF' },
  tiff: { kind: 'image', format: null, name: 'TIFF' },
  svg: { kind: 'image', format: null, name: 'SVG' },
  mp4: { kind: 'video', format: 'mp4', name: 'MP4' },
  m4v: { kind: 'video', format: 'mp4', name: 'MP4' },
  mov: { kind: 'video', format: 'mov', name: 'MOV' },
  qt: { kind: 'video', format: 'mov', name: 'MOV' },
  webm: { kind: 'video', format: null, name: 'WebM' },
  mkv: { kind: 'video', format: null, name: 'MKV' },
  avi: { kind: 'video', format: null, name: 'AVI' },
  wmv: { kind: 'video', format: null, name: 'WMV' },
  flv: { kind: 'video', format: null, name: 'FLV' },
};

/** Guess from the URL path's extension; null when the URL has none we know (the check waits for the bytes). */
export function natureFromUrl(url: string): MediaNature | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return null;
  }
  const match = /\.([a-z0-9]{1,5})$/i.exec(path);
  return match ? (byExtension[match[1].toLowerCase()] ?? null) : null;
}

const byMime: Readonly<Record<string, ImageFormat | VideoFormat>> = {
  'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/pjpeg': 'jpeg',
  'image/png': 'png', 'image/webp': 'webp', 'image/gif': 'gif',
  'video/mp4': 'mp4', 'video/quicktime': 'mov',
};

/** From the content type the media layer read from the bytes. */
export function natureFromContent(content: { mimeType: string; kind: 'image' | 'video' }): MediaNature {
  const mime = content.mimeType.split(';')[0].trim().toLowerCase();
  const format = byMime[mime] ?? null;
  return { kind: content.kind, format, name: format ? formatNames[format] : mime || 'an unknown format' };
}
