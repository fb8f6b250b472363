import { imageSize } from 'image-size';
import type { ImageFormat, VideoFormat } from '../platforms/capabilities';
import { mediaUnsupported } from './errors';
import { readMovie } from './iso-bmff';

/**
 * What the bytes are, read from the bytes alone (never from a file name or a Content-Type header): the formats the
 * platforms take (publishing-api.md "Media rules"), their size, picture size and, for video, duration.
 */

export type MediaFormat = ImageFormat | VideoFormat;
export type MediaKind = 'image' | 'video';

export interface MediaFacts {
  mimeType: string;
  kind: MediaKind;
  format: MediaFormat;
  /** Bytes. */
  size: number;
  /** As displayed (EXIF and track rotations applied). Null only for a video whose track gives none. */
  width: number | null;
  height: number | null;
  /** Video only. */
  durationMs: number | null;
}

type SniffResult = { ok: true; facts: MediaFacts } | { ok: false; reason: string };

const mimeTypes: Readonly<Record<MediaFormat, string>> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
};

const acceptedFormatsText = 'JPEG, PNG, GIF, WebP, MP4 or MOV';

const formatNames: Readonly<Record<MediaFormat, string>> = { jpeg: 'JPEG', png: 'PNG', gif: 'GIF', webp: 'WebP', mp4: 'MP4', mov: 'MOV' };

/** ISO BMFF brands of plain MP4 video. Image (heic, avif, mif1) and audio-only (M4A) brands are deliberately absent. */
const mp4Brands = new Set(['isom', 'iso2', 'iso3', 'iso4', 'iso5', 'iso6', 'mp41', 'mp42', 'avc1', 'hvc1', 'M4V ', 'M4VH', 'M4VP', 'dash', 'mmp4', 'MSNV', 'f4v ']);
const imageBrands = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1', 'avif', 'avis']);

export function sniffMedia(bytes: Buffer): SniffResult {
  const format = detectFormat(bytes);
  if (!format) return { ok: false, reason: `the file is not a ${acceptedFormatsText} file` };
  return format === 'mp4' || format === 'mov' ? describeVideo(bytes, format) : describeImage(bytes, format);
}

/** The facts, or 400 `unsupported_media` saying why the bytes cannot be used. */
export function requireDecodable(bytes: Buffer, url?: string | URL): MediaFacts {
  const result = sniffMedia(bytes);
  if (!result.ok) throw mediaUnsupported(`Media is undecodable: ${result.reason}`, 'undecodable', url);
  return result.facts;
}

function detectFormat(b: Buffer): MediaFormat | null {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a) return 'png';
  if (b.length >= 6 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a')) return 'gif';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  return videoFormatFromBrands(b);
}

function videoFormatFromBrands(b: Buffer): VideoFormat | null {
  if (b.length < 12 || b.toString('latin1', 4, 8) !== 'ftyp') return null;
  const major = b.toString('latin1', 8, 12);
  if (major === 'qt  ') return 'mov';
  if (mp4Brands.has(major)) return 'mp4';
  if (imageBrands.has(major)) return null;
  // An unusual major brand: decide by the compatible brands, unless they say it is a still image.
  const size = Math.min(b.readUInt32BE(0), b.length, 4096);
  const compatible: string[] = [];
  for (let offset = 16; offset + 4 <= size; offset += 4) compatible.push(b.toString('latin1', offset, offset + 4));
  if (compatible.some((brand) => imageBrands.has(brand))) return null;
  if (compatible.includes('qt  ')) return 'mov';
  return compatible.some((brand) => mp4Brands.has(brand)) ? 'mp4' : null;
}

function describeImage(bytes: Buffer, format: ImageFormat): SniffResult {
  const name = formatNames[format];
  if (!isComplete(bytes, format)) return { ok: false, reason: `the ${name} file is truncated` };
  let dimensions: { width?: number; height?: number; orientation?: number };
  try {
    dimensions = imageSize(bytes);
  } catch {
    return { ok: false, reason: `the ${name} file is damaged (no readable picture size)` };
  }
  const { width, height, orientation } = dimensions;
  if (!width || !height) return { ok: false, reason: `the ${name} file has no picture size` };
  // EXIF orientations 5-8 turn the picture a quarter: the displayed size is the stored one swapped.
  const turned = orientation !== undefined && orientation >= 5;
  return {
    ok: true,
    facts: { mimeType: mimeTypes[format], kind: 'image', format, size: bytes.length, width: turned ? height : width, height: turned ? width : height, durationMs: null },
  };
}

/** Cheap end-of-file checks, so a download cut short is refused now rather than by the platform at publish time. */
function isComplete(b: Buffer, format: ImageFormat): boolean {
  switch (format) {
    case 'png':
      return b.lastIndexOf('IEND', undefined, 'latin1') > 8;
    case 'jpeg':
      return b.lastIndexOf(Buffer.from([0xff, 0xd9])) > 2;
    case 'gif':
      return b.length > 13 && b.subarray(-16).includes(0x3b);
    case 'webp':
      return b.readUInt32LE(4) + 8 <= b.length;
  }
}

function describeVideo(bytes: Buffer, format: VideoFormat): SniffResult {
  const name = formatNames[format];
  const movie = readMovie(bytes);
  if (!movie || !movie.hasMovie) return { ok: false, reason: `the ${name} file has no movie header (moov box); it may be truncated` };
  if (movie.width === null || movie.height === null) return { ok: false, reason: `the ${name} file has no video track` };
  return {
    ok: true,
    facts: { mimeType: mimeTypes[format], kind: 'video', format, size: bytes.length, width: movie.width, height: movie.height, durationMs: movie.durationMs },
  };
}
