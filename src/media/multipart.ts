import busboy from 'busboy';
import type { Request } from 'express';
import { ApiError } from '../errors';
import { formatBytes, formatSeconds, mediaUnsupported } from './errors';

/**
 * Reads the one `file` part of a multipart upload into memory, refusing it the moment it grows past `maxBytes`
 * (400 `unsupported_media`) instead of after reading it all. The part's file name and declared type are ignored:
 * the bytes decide what the file is.
 */

interface ReceivedFile {
  bytes: Buffer;
}

/** Room for the multipart boundaries and part headers around the file. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

const DEFAULT_UPLOAD_TIMEOUT_MS = 10 * 60 * 1000;

export function receiveMultipartFile(req: Request, maxBytes: number, timeoutMs = DEFAULT_UPLOAD_TIMEOUT_MS): Promise<ReceivedFile> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > maxBytes + MULTIPART_OVERHEAD_BYTES) return Promise.reject(tooLarge(maxBytes));

  return new Promise<ReceivedFile>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: maxBytes, fields: 0, parts: 4 } });
    } catch {
      reject(new ApiError('bad_request', 'Malformed multipart body: missing or invalid boundary'));
      return;
    }
    let settled = false;
    let file: Buffer | null = null;
    // A client trickling bytes must not hold a request (and its buffers) open indefinitely.
    const timer = setTimeout(() => fail(new ApiError('bad_request', `The upload did not finish within ${formatSeconds(timeoutMs)}`)), timeoutMs);
    const fail = (err: ApiError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.unpipe(parser);
      req.resume(); // discard the rest; the response closes the connection
      reject(err);
    };

    parser.on('file', (name, stream) => {
      if (name !== 'file') {
        stream.resume();
        return fail(new ApiError('bad_request', `Unexpected multipart part "${name.slice(0, 50)}"; send the media as the part "file"`));
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => fail(tooLarge(maxBytes)));
      stream.on('end', () => {
        if (!(stream as { truncated?: boolean }).truncated) file = Buffer.concat(chunks);
      });
    });
    parser.on('field', (name) => fail(new ApiError('bad_request', `Unexpected multipart field "${name.slice(0, 50)}"; send only the part "file"`)));
    parser.on('fieldsLimit', () => fail(new ApiError('bad_request', 'Send only the part "file"')));
    parser.on('filesLimit', () => fail(new ApiError('bad_request', 'Send exactly one file per request')));
    parser.on('partsLimit', () => fail(new ApiError('bad_request', 'Send only the part "file"')));
    parser.on('error', () => fail(new ApiError('bad_request', 'Malformed multipart body')));
    parser.on('close', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (file === null || file.length === 0) reject(new ApiError('bad_request', 'The multipart body has no "file" part (or it is empty)'));
      else resolve({ bytes: file });
    });
    req.on('aborted', () => fail(new ApiError('bad_request', 'The request body was not completely received')));
    req.pipe(parser);
  });
}

function tooLarge(maxBytes: number) {
  return mediaUnsupported(`Media is too large: it exceeds ${formatBytes(maxBytes)}, the most Herald accepts`, 'too_large');
}
