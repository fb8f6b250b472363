/**
 * A small, bounded reader for ISO base media files (MP4, MOV): the `ftyp` brands, the movie duration from
 * `moov/mvhd` and the picture size of the first video track from `moov/trak/tkhd`. It never throws on junk: every
 * read is range-checked, the walk is limited in depth and in boxes visited, and anything it cannot read is `null`.
 */

interface BoxRef {
  type: string;
  /** Offset of the payload (after the size/type header). */
  start: number;
  /** Offset just past the box. */
  end: number;
}

interface MovieFacts {
  majorBrand: string;
  compatibleBrands: string[];
  /** False when there is no `moov` box at all (an incomplete or fragment-only file). */
  hasMovie: boolean;
  durationMs: number | null;
  width: number | null;
  height: number | null;
}

const MAX_BOXES = 10_000;
const MAX_DEPTH = 8;

/** Lists the direct children of a region, stopping at the first box whose header does not fit. */
function childBoxes(buf: Buffer, start: number, end: number, budget = { left: MAX_BOXES }): BoxRef[] {
  const boxes: BoxRef[] = [];
  let offset = start;
  while (offset + 8 <= end && budget.left-- > 0) {
    let size = buf.readUInt32BE(offset);
    const type = buf.toString('latin1', offset + 4, offset + 8);
    let header = 8;
    if (size === 1) {
      if (offset + 16 > end) break;
      const large = buf.readBigUInt64BE(offset + 8);
      if (large > BigInt(end - offset)) break;
      size = Number(large);
      header = 16;
    } else if (size === 0) {
      size = end - offset;
    }
    if (size < header || offset + size > end) break;
    boxes.push({ type, start: offset + header, end: offset + size });
    offset += size;
  }
  return boxes;
}

/** The first box at `path` (for example `['moov', 'mvhd']`), or null. */
function findBox(buf: Buffer, path: readonly string[], region: { start: number; end: number } = { start: 0, end: buf.length }): BoxRef | null {
  if (path.length === 0 || path.length > MAX_DEPTH) return null;
  const [head, ...rest] = path;
  const box = childBoxes(buf, region.start, region.end).find((b) => b.type === head);
  if (!box) return null;
  return rest.length === 0 ? box : findBox(buf, rest, box);
}

function readFileType(buf: Buffer): { majorBrand: string; compatibleBrands: string[] } | null {
  if (buf.length < 12 || buf.toString('latin1', 4, 8) !== 'ftyp') return null;
  const size = buf.readUInt32BE(0);
  if (size < 16 || size > buf.length || size > 4096) return null;
  const majorBrand = buf.toString('latin1', 8, 12);
  const compatibleBrands: string[] = [];
  for (let offset = 16; offset + 4 <= size; offset += 4) compatibleBrands.push(buf.toString('latin1', offset, offset + 4));
  return { majorBrand, compatibleBrands };
}

export function readMovie(buf: Buffer): MovieFacts | null {
  const fileType = readFileType(buf);
  if (!fileType) return null;
  const moov = findBox(buf, ['moov']);
  if (!moov) return { ...fileType, hasMovie: false, durationMs: null, width: null, height: null };
  const size = videoTrackSize(buf, moov);
  return { ...fileType, hasMovie: true, durationMs: movieDuration(buf, moov), width: size?.width ?? null, height: size?.height ?? null };
}

function movieDuration(buf: Buffer, moov: BoxRef): number | null {
  const mvhd = findBox(buf, ['mvhd'], moov);
  const fromHeader = mvhd ? readTimescaledDuration(buf, mvhd, 12, 20) : null;
  if (fromHeader) return fromHeader;
  // Fragmented files leave mvhd's duration at 0 and may give the whole length in mvex/mehd (in mvhd's timescale).
  const mehd = findBox(buf, ['mvex', 'mehd'], moov);
  if (!mvhd || !mehd || mehd.end - mehd.start < 8) return null;
  const version = buf[mvhd.start];
  const timescaleAt = mvhd.start + (version === 1 ? 20 : 12);
  if (timescaleAt + 4 > mvhd.end) return null;
  const timescale = buf.readUInt32BE(timescaleAt);
  const mehdVersion = buf[mehd.start];
  const duration = mehdVersion === 1 ? (mehd.end - mehd.start >= 12 ? Number(buf.readBigUInt64BE(mehd.start + 4)) : 0) : buf.readUInt32BE(mehd.start + 4);
  return toMs(duration, timescale);
}

/** mvhd: version/flags, creation, modification, timescale, duration (32-bit fields in v0, 64-bit times in v1). */
function readTimescaledDuration(buf: Buffer, box: BoxRef, v0TimescaleOffset: number, v1TimescaleOffset: number): number | null {
  const version = buf[box.start];
  const at = box.start + (version === 1 ? v1TimescaleOffset : v0TimescaleOffset);
  const durationBytes = version === 1 ? 8 : 4;
  if (at + 4 + durationBytes > box.end) return null;
  const timescale = buf.readUInt32BE(at);
  const raw = version === 1 ? buf.readBigUInt64BE(at + 4) : BigInt(buf.readUInt32BE(at + 4));
  // All ones means "unknown" in both versions.
  if (raw === (version === 1 ? 0xffff_ffff_ffff_ffffn : 0xffff_ffffn)) return null;
  return toMs(Number(raw), timescale);
}

function toMs(duration: number, timescale: number): number | null {
  if (!timescale || !duration || !Number.isFinite(duration)) return null;
  return Math.round((duration * 1000) / timescale);
}

/** Size of the first track whose handler is `vide` (or, failing that, the first track with a picture size). */
function videoTrackSize(buf: Buffer, moov: BoxRef): { width: number; height: number } | null {
  let fallback: { width: number; height: number } | null = null;
  for (const trak of childBoxes(buf, moov.start, moov.end).filter((b) => b.type === 'trak')) {
    const tkhd = findBox(buf, ['tkhd'], trak);
    const size = tkhd ? readTrackSize(buf, tkhd) : null;
    if (!size) continue;
    if (handlerType(buf, trak) === 'vide') return size;
    fallback ??= size;
  }
  return fallback;
}

function handlerType(buf: Buffer, trak: BoxRef): string | null {
  const hdlr = findBox(buf, ['mdia', 'hdlr'], trak);
  // version/flags (4), pre_defined (4), handler_type (4)
  if (!hdlr || hdlr.start + 12 > hdlr.end) return null;
  return buf.toString('latin1', hdlr.start + 8, hdlr.start + 12);
}

/**
 * tkhd: after version/flags come the times, track id and duration (24 bytes in v0, 36 in v1), then 8 reserved,
 * layer, alternate group, volume, 2 reserved (8 bytes), the 3x3 matrix (36 bytes), width and height as 16.16.
 * A matrix turning the picture a quarter (phone videos shot upright) swaps the displayed width and height.
 */
function readTrackSize(buf: Buffer, tkhd: BoxRef): { width: number; height: number } | null {
  const fixedPart = buf[tkhd.start] === 1 ? 36 : 24;
  const matrixAt = tkhd.start + fixedPart + 16;
  const widthAt = matrixAt + 36;
  if (widthAt + 8 > tkhd.end) return null;
  const width = Math.round(buf.readUInt32BE(widthAt) / 65536);
  const height = Math.round(buf.readUInt32BE(widthAt + 4) / 65536);
  if (width === 0 || height === 0) return null;
  const a = buf.readInt32BE(matrixAt);
  const b = buf.readInt32BE(matrixAt + 4);
  const quarterTurn = a === 0 && Math.abs(b) === 0x10000;
  return quarterTurn ? { width: height, height: width } : { width, height };
}
