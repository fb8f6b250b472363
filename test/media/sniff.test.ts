import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors';
import { box, gif, jpeg, movie, png, webp } from './fixtures';
import { requireDecodable, sniffMedia } from '../../src/media/sniff';
import { readMovie } from '../../src/media/iso-bmff';

const facts = (bytes: Buffer) => {
  const result = sniffMedia(bytes);
  assert.ok(result.ok, `expected decodable, got ${JSON.stringify(result)}`);
  return result.facts;
};

describe('media sniffing', () => {
  describe('images', () => {
    it('reads a PNG', () => {
      const bytes = png(3, 2);
      assert.deepEqual(facts(bytes), { mimeType: 'image/png', kind: 'image', format: 'png', size: bytes.length, width: 3, height: 2, durationMs: null });
    });

    it('reads a JPEG', () => {
      const bytes = jpeg(20, 10);
      assert.deepEqual(facts(bytes), { mimeType: 'image/jpeg', kind: 'image', format: 'jpeg', size: bytes.length, width: 20, height: 10, durationMs: null });
    });

    it('reports a JPEG turned by its EXIF orientation at its displayed size', () => {
      assert.deepEqual([facts(jpeg(40, 10, { exifOrientation: 6 })).width, facts(jpeg(40, 10, { exifOrientation: 6 })).height], [10, 40]);
      assert.deepEqual([facts(jpeg(40, 10, { exifOrientation: 3 })).width, facts(jpeg(40, 10, { exifOrientation: 3 })).height], [40, 10]);
    });

    it('reads a GIF', () => {
      const bytes = gif(5, 4);
      assert.deepEqual(facts(bytes), { mimeType: 'image/gif', kind: 'image', format: 'gif', size: bytes.length, width: 5, height: 4, durationMs: null });
    });

    it('reads a WebP', () => {
      const bytes = webp(7, 3);
      assert.deepEqual(facts(bytes), { mimeType: 'image/webp', kind: 'image', format: 'webp', size: bytes.length, width: 7, height: 3, durationMs: null });
    });
  });

  describe('video', () => {
    it('reads an MP4: duration from mvhd, size from the video track tkhd', () => {
      const bytes = movie({ timescale: 600, duration: 7_407, width: 1920, height: 1080 });
      assert.deepEqual(facts(bytes), { mimeType: 'video/mp4', kind: 'video', format: 'mp4', size: bytes.length, width: 1920, height: 1080, durationMs: 12_345 });
    });

    it('reads a QuickTime MOV by its qt brand', () => {
      const bytes = movie({ majorBrand: 'qt  ', compatibleBrands: ['qt  '], duration: 3_000 });
      assert.deepEqual(facts(bytes), { mimeType: 'video/quicktime', kind: 'video', format: 'mov', size: bytes.length, width: 1280, height: 720, durationMs: 3_000 });
    });

    it('reads version 1 headers, an audio track before the video, moov after mdat and a quarter-turn matrix', () => {
      const bytes = movie({ version1: true, audioFirst: true, moovLast: true, rotate90: true, width: 1920, height: 1080, timescale: 90_000, duration: 900_000 });
      assert.deepEqual(facts(bytes), { mimeType: 'video/mp4', kind: 'video', format: 'mp4', size: bytes.length, width: 1080, height: 1920, durationMs: 10_000 });
    });

    it('decides an unusual major brand by its compatible brands', () => {
      assert.equal(facts(movie({ majorBrand: 'XAVC', compatibleBrands: ['XAVC', 'mp42', 'iso2'] })).format, 'mp4');
      assert.equal(facts(movie({ majorBrand: 'XAVC', compatibleBrands: ['XAVC', 'qt  '] })).format, 'mov');
    });

    it('reports an unknown duration as null rather than guessing', () => {
      assert.equal(facts(movie({ duration: 0 })).durationMs, null);
    });
  });

  describe('undecodable', () => {
    const refused = (bytes: Buffer) => {
      const result = sniffMedia(bytes);
      assert.equal(result.ok, false);
      return (result as { reason: string }).reason;
    };

    it('refuses junk, empty input and formats Herald does not publish', () => {
      assert.equal(refused(Buffer.from('<html><body>Not found</body></html>')), 'the file is not a JPEG, PNG, GIF, WebP, MP4 or MOV file');
      assert.equal(refused(Buffer.alloc(0)), 'the file is not a JPEG, PNG, GIF, WebP, MP4 or MOV file');
      assert.equal(refused(Buffer.from('BM\x36\x00\x00\x00', 'latin1')), 'the file is not a JPEG, PNG, GIF, WebP, MP4 or MOV file');
    });

    it('refuses still-image and audio-only ISO files (HEIC, AVIF, M4A)', () => {
      assert.equal(refused(movie({ majorBrand: 'heic', compatibleBrands: ['mif1', 'heic'] })), 'the file is not a JPEG, PNG, GIF, WebP, MP4 or MOV file');
      assert.equal(refused(movie({ majorBrand: 'avif', compatibleBrands: ['avif', 'mif1'] })), 'the file is not a JPEG, PNG, GIF, WebP, MP4 or MOV file');
      assert.equal(refused(movie({ majorBrand: 'M4A ', compatibleBrands: ['M4A ', 'isom'] , noVideo: true })), 'the MP4 file has no video track');
    });

    it('refuses truncated images', () => {
      const cut = (bytes: Buffer) => bytes.subarray(0, bytes.length - 14);
      assert.equal(refused(cut(png(30, 30))), 'the PNG file is truncated');
      assert.equal(refused(cut(jpeg(64, 64))), 'the JPEG file is truncated');
      assert.equal(refused(cut(webp(8, 8))), 'the WebP file is truncated');
      assert.equal(refused(gif(5, 4).subarray(0, 20)), 'the GIF file is truncated');
      assert.equal(refused(png(3, 2).subarray(0, 12)), 'the PNG file is truncated');
    });

    it('refuses an image whose header is damaged', () => {
      const bytes = png(3, 2);
      bytes.write('XXXX', 12, 'latin1'); // IHDR renamed
      assert.equal(refused(bytes), 'the PNG file is damaged (no readable picture size)');
    });

    it('refuses an MP4 cut before its moov box, and one without a video track', () => {
      const full = movie({ moovLast: true });
      assert.equal(refused(full.subarray(0, full.length - 40)), 'the MP4 file has no movie header (moov box); it may be truncated');
      assert.equal(refused(movie({ noVideo: true })), 'the MP4 file has no video track');
    });

    it('never throws on random or hostile bytes', () => {
      let seed = 42;
      const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) & 0xff;
      const prefixes = [jpeg(8, 8).subarray(0, 3), png(1, 1).subarray(0, 8), Buffer.from('GIF89a'), Buffer.from('RIFF\0\0\0\0WEBP'), movie().subarray(0, 40)];
      for (let i = 0; i < 500; i++) {
        const tail = Buffer.from(Array.from({ length: i % 97 }, random));
        const bytes = Buffer.concat([prefixes[i % prefixes.length], tail]);
        assert.doesNotThrow(() => sniffMedia(bytes));
      }
      // A box claiming a 64-bit size larger than the file, and a zero-length size loop.
      const lying = Buffer.concat([box('ftyp', Buffer.from('isom\0\0\0\0isom')), Buffer.from([0, 0, 0, 1]), Buffer.from('moov'), Buffer.from([0xff, 0, 0, 0, 0, 0, 0, 0])]);
      assert.deepEqual(sniffMedia(lying), { ok: false, reason: 'the MP4 file has no movie header (moov box); it may be truncated' });
      const nested = Buffer.concat([box('ftyp', Buffer.from('isom\0\0\0\0isom')), box('moov', box('trak', box('tkhd', Buffer.alloc(3))))]);
      assert.deepEqual(readMovie(nested), { majorBrand: 'isom', compatibleBrands: ['isom'], hasMovie: true, durationMs: null, width: null, height: null });
    });

    it('requireDecodable answers 400 unsupported_media naming the URL', () => {
      assert.throws(
        () => requireDecodable(Buffer.from('hello'), 'https://cdn.example.com/cat.jpg'),
        (err: unknown) => {
          assert.ok(err instanceof ApiError);
          assert.deepEqual([err.status, err.toEnvelope()], [
            400,
            { error: { code: 'unsupported_media', message: 'Media is undecodable: the file is not a JPEG, PNG, GIF, WebP, MP4 or MOV file (https://cdn.example.com/cat.jpg)' } },
          ]);
          return true;
        },
      );
    });
  });
});
