// How a run keeps its encoded history (issue 15, `Run.history`): a growing buffer while the run is active, a one-byte
// (latin1) string of the same bytes once it waits, deflated when it waits long or is closed. Strings live in V8's
// heap, which moves and compacts them; a malloc'd buffer kept for days among a burst's short-lived ones keeps glibc's
// heap from shrinking after the burst.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { ownedCopy } from './proto';

/**
 * A history deflated against its workflow type's dictionary: the first history of that type ever deflated in this
 * process, kept for as long as the process runs (one per workflow type). Runs of one type share most of their bytes
 * (type and queue names, payload encodings, search attribute names, the SDK's metadata), so a scheduled post's
 * ~1.1 KiB history deflates to ~0.25 KiB against it, ~0.6 KiB without.
 */
class DeflatedHistory {
  constructor(
    readonly bytes: string, // latin1, in V8's heap (see `Run.history`)
    readonly dictionary: Buffer,
  ) {}

  inflate(): Buffer {
    return inflateRawSync(Buffer.from(this.bytes, 'latin1'), { ...ZLIB_OPTIONS, dictionary: this.dictionary });
  }
}

/**
 * An 8 KiB window holds a waiting run's history and its dictionary whole (a scheduled post's is ~1.1 KiB each) and
 * deflates it as small as zlib's default 32 KiB window does; deflating then needs ~64 KiB of memory for its state,
 * not ~256 KiB, which glibc hands out from its heap and takes back at once, instead of a mapping each time.
 */
const ZLIB_OPTIONS = { windowBits: 13, memLevel: 6 };

const dictionaries = new Map<string, Buffer>();

export function deflateHistory(workflowType: string, bytes: Buffer): DeflatedHistory {
  let dictionary = dictionaries.get(workflowType);
  // zlib reads only the last window's worth of a dictionary: a longer first history is not kept whole for good.
  if (!dictionary) dictionaries.set(workflowType, (dictionary = ownedCopy(bytes.subarray(-(1 << ZLIB_OPTIONS.windowBits)))));
  return new DeflatedHistory(deflateRawSync(bytes, { ...ZLIB_OPTIONS, dictionary }).toString('latin1'), dictionary);
}

export type StoredHistory = Buffer | string | DeflatedHistory;

export function isDeflated(history: StoredHistory): history is DeflatedHistory {
  return history instanceof DeflatedHistory;
}

/** The bytes from `from` to `to`: a view of a buffer, else a copy made from the string or the deflated form. */
export function storedBytes(history: StoredHistory, from: number, to: number): Buffer {
  if (Buffer.isBuffer(history)) return history.subarray(from, to);
  if (typeof history === 'string') return Buffer.from(history.slice(from, to), 'latin1');
  return history.inflate().subarray(from, to);
}
