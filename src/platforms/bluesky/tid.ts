import { createHash, randomInt } from 'node:crypto';

/**
 * Record keys for posts are TIDs (atproto "Timestamp Identifier"): 13 characters of base32-sortable holding a 64-bit
 * number whose top bit is 0, then 53 bits of microseconds since the epoch, then a 10-bit clock id.
 * Herald derives the key of a post from its own post id, so a repeated create can only hit the same key
 * (the PDS refuses a second record there) and never make a second post.
 */

const ALPHABET = '234567abcdefghijklmnopqrstuvwxyz';
const TID_PATTERN = /^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/;

/** Derived keys carry a timestamp inside a fixed past window (2023-01-01 plus up to ~2.2 years), never the future. */
const DERIVED_EPOCH_US = BigInt(Date.UTC(2023, 0, 1)) * 1000n;
const DERIVED_WINDOW_BITS = 46n;

export function isTid(value: string): boolean {
  return TID_PATTERN.test(value);
}

function encodeTid(timestampUs: bigint, clockId: number): string {
  if (timestampUs < 0n || timestampUs >= 1n << 53n) throw new RangeError('TID timestamp out of range');
  let value = (timestampUs << 10n) | BigInt(clockId & 0x3ff);
  let out = '';
  for (let i = 0; i < 13; i += 1) {
    out = ALPHABET[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

/** The record key of the Bluesky post made for Herald post `postId`: the same id always gives the same key. */
export function rkeyForPost(postId: string): string {
  return derivedRkey(`herald:bluesky:post:${postId}`);
}

/**
 * The record key of a comment reply made by reply attempt `attemptId` (`replyAttemptId`, stable across retries of one
 * Idempotency-Key): a retry can only land on the same key, where the PDS refuses a second record (protocols.md).
 */
export function rkeyForReply(attemptId: string): string {
  return derivedRkey(`herald:bluesky:reply:${attemptId}`);
}

function derivedRkey(seed: string): string {
  const digest = createHash('sha256').update(seed).digest();
  const offset = digest.readBigUInt64BE(0) & ((1n << DERIVED_WINDOW_BITS) - 1n);
  return encodeTid(DERIVED_EPOCH_US + offset, digest.readUInt16BE(8));
}

/** A fresh key for records with no Herald post id (comment replies): chosen by us so an unknown outcome can be looked up. */
export function freshRkey(now: Date): string {
  const micros = BigInt(now.getTime()) * 1000n + BigInt(randomInt(1000));
  return encodeTid(micros, randomInt(1024));
}
