import { crc32, deflateSync } from 'node:zlib';

/**
 * Tiny encoders for real, decodable media of any size, so tests need no binary files: a PNG (zlib scanlines), a
 * baseline JPEG (one grey 8x8 block after another), a GIF (a 1x1 image on a w x h screen), a lossless WebP (VP8L with
 * one-symbol prefix codes, so every pixel costs no bits) and an MP4/MOV skeleton (ftyp + moov/mvhd/trak/tkhd/mdia/hdlr).
 */

export function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 0x7f)]);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(pixels)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export function jpeg(width: number, height: number, options: { exifOrientation?: number } = {}): Buffer {
  const segment = (marker: number, data: Buffer) => {
    const head = Buffer.alloc(4);
    head.writeUInt16BE(0xff00 | marker, 0);
    head.writeUInt16BE(data.length + 2, 2);
    return Buffer.concat([head, data]);
  };
  const app1 = options.exifOrientation ? [segment(0xe1, exifOrientation(options.exifOrientation))] : [];
  const dqt = Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)]);
  const sof = Buffer.alloc(9);
  sof[0] = 8;
  sof.writeUInt16BE(height, 1);
  sof.writeUInt16BE(width, 3);
  sof.set([1, 1, 0x11, 0], 5);
  // One-symbol Huffman tables: DC difference category 0 and AC end-of-block, each coded as the 1-bit code "0".
  const oneSymbolTable = (classAndId: number) => Buffer.concat([Buffer.from([classAndId, 1]), Buffer.alloc(15), Buffer.from([0])]);
  const sos = Buffer.from([1, 1, 0x00, 0, 63, 0]);
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const bits = blocks * 2; // "0" (DC) + "0" (EOB) per block
  const scan = Buffer.alloc(Math.ceil(bits / 8), 0);
  if (bits % 8) scan[scan.length - 1] = 0xff >> bits % 8; // pad with 1-bits
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    ...app1,
    segment(0xdb, dqt),
    segment(0xc0, sof),
    segment(0xc4, oneSymbolTable(0x00)),
    segment(0xc4, oneSymbolTable(0x10)),
    segment(0xda, sos),
    scan,
    Buffer.from([0xff, 0xd9]),
  ]);
}

function exifOrientation(value: number): Buffer {
  const tiff = Buffer.alloc(26);
  tiff.write('MM', 0, 'latin1');
  tiff.writeUInt16BE(42, 2);
  tiff.writeUInt32BE(8, 4);
  tiff.writeUInt16BE(1, 8); // one IFD entry
  tiff.writeUInt16BE(0x0112, 10); // Orientation
  tiff.writeUInt16BE(3, 12); // SHORT
  tiff.writeUInt32BE(1, 14);
  tiff.writeUInt16BE(value, 18);
  tiff.writeUInt32BE(0, 22); // no next IFD
  return Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
}

export function gif(width: number, height: number): Buffer {
  const screen = Buffer.alloc(7);
  screen.writeUInt16LE(width, 0);
  screen.writeUInt16LE(height, 2);
  screen[4] = 0x80; // global colour table of 2 entries
  return Buffer.concat([
    Buffer.from('GIF89a', 'latin1'),
    screen,
    Buffer.from([0xff, 0xff, 0xff, 0, 0, 0]),
    Buffer.from([0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0]), // image descriptor: 1x1 at 0,0
    Buffer.from([0x02, 0x02, 0x44, 0x01, 0x00]), // LZW: min code size 2, one pixel
    Buffer.from([0x3b]),
  ]);
}

export function webp(width: number, height: number): Buffer {
  const bits: number[] = [];
  const put = (value: number, count: number) => {
    for (let i = 0; i < count; i++) bits.push((value >> i) & 1);
  };
  put(width - 1, 14);
  put(height - 1, 14);
  put(0, 1); // alpha unused
  put(0, 3); // version
  put(0, 1); // no transform
  put(0, 1); // no colour cache
  put(0, 1); // no meta prefix codes
  for (const symbol of [0x80, 0x40, 0x20, 0xff, 0]) {
    put(1, 1); // simple code
    put(0, 1); // one symbol
    put(1, 1); // 8-bit symbol
    put(symbol, 8);
  }
  const data = Buffer.alloc(1 + Math.ceil(bits.length / 8));
  data[0] = 0x2f;
  bits.forEach((bit, i) => (data[1 + (i >> 3)] |= bit << (i & 7)));
  const padded = data.length % 2 ? Buffer.concat([data, Buffer.alloc(1)]) : data;
  const chunkHead = Buffer.alloc(8);
  chunkHead.write('VP8L', 0, 'latin1');
  chunkHead.writeUInt32LE(data.length, 4);
  const riff = Buffer.alloc(12);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(4 + 8 + padded.length, 4);
  riff.write('WEBP', 8, 'latin1');
  return Buffer.concat([riff, chunkHead, padded]);
}

interface MovieOptions {
  majorBrand?: string;
  compatibleBrands?: string[];
  width?: number;
  height?: number;
  timescale?: number;
  duration?: number;
  /** Write mvhd and tkhd as version 1 (64-bit times). */
  version1?: boolean;
  /** A quarter-turn display matrix, as phones write for upright video. */
  rotate90?: boolean;
  /** Add an audio track before the video track. */
  audioFirst?: boolean;
  /** Leave the video track out (audio only). */
  noVideo?: boolean;
  /** Put the moov box after mdat (not "fast start"). */
  moovLast?: boolean;
}

export function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
}

const identity = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000];
const quarterTurn = [0, 0x10000, 0, -0x10000, 0, 0, 0, 0, 0x40000000];

function matrix(values: number[]): Buffer {
  const out = Buffer.alloc(36);
  values.forEach((v, i) => out.writeInt32BE(v, i * 4));
  return out;
}

function u32(...values: number[]): Buffer {
  const out = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => out.writeUInt32BE(v, i * 4));
  return out;
}

function u64(value: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(BigInt(value));
  return out;
}

export function movie(options: MovieOptions = {}): Buffer {
  const { timescale = 1000, duration = 12_345, width = 1280, height = 720, version1 = false } = options;
  const major = options.majorBrand ?? 'isom';
  const ftyp = box('ftyp', Buffer.from(major, 'latin1'), u32(0x200), Buffer.from((options.compatibleBrands ?? ['isom', 'iso2', 'avc1', 'mp41']).join(''), 'latin1'));
  const times = (n: number) => (version1 ? Buffer.concat([u64(0), u64(0)]) : u32(0, 0)).subarray(0, n);
  const mvhd = box(
    'mvhd',
    u32(version1 ? 0x01000000 : 0),
    times(version1 ? 16 : 8),
    u32(timescale),
    version1 ? u64(duration) : u32(duration),
    u32(0x00010000),
    Buffer.from([0x01, 0x00]),
    Buffer.alloc(10),
    matrix(identity),
    Buffer.alloc(24),
    u32(3),
  );
  const track = (id: number, handler: string, w: number, h: number, rotate: boolean) =>
    box(
      'trak',
      box(
        'tkhd',
        u32(version1 ? 0x01000003 : 3),
        times(version1 ? 16 : 8),
        u32(id, 0),
        version1 ? u64(duration) : u32(duration),
        Buffer.alloc(8),
        Buffer.alloc(8),
        matrix(rotate ? quarterTurn : identity),
        u32(w * 65536, h * 65536),
      ),
      box('mdia', box('hdlr', u32(0, 0), Buffer.from(handler, 'latin1'), Buffer.alloc(12), Buffer.from('Handler\0', 'latin1'))),
    );
  const tracks = [
    ...(options.audioFirst || options.noVideo ? [track(2, 'soun', 0, 0, false)] : []),
    ...(options.noVideo ? [] : [track(1, 'vide', width, height, options.rotate90 ?? false)]),
  ];
  const moov = box('moov', mvhd, ...tracks);
  const mdat = box('mdat', Buffer.alloc(64, 0xab));
  return Buffer.concat(options.moovLast ? [ftyp, mdat, moov] : [ftyp, moov, mdat]);
}
