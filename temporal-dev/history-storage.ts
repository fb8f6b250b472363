// How a run keeps its encoded history (issue 15, `Run.history`): a growing buffer while the run is active, a one-byte
// (latin1) string of the same bytes once it waits, deflated when it waits long or is closed. Strings live in V8's
// heap, which moves and compacts them; a malloc'd buffer kept for days among a burst's short-lived ones keeps glibc's
// heap from shrinking after the burst.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { ownedCopy, writeVarint } from './proto';

/**
 * An 8 KiB window holds a waiting run's history and its dictionary whole (a scheduled post's history ~1.5 KiB,
 * Herald's `publishPost` dictionary ~3 KiB) and deflates it as small as zlib's default 32 KiB window does; deflating
 * then needs ~64 KiB of memory for its state, not ~256 KiB, which glibc hands out from its heap and takes back at
 * once, instead of a mapping each time.
 */
const ZLIB_OPTIONS = { windowBits: 13, memLevel: 6 };

/**
 * Every dictionary a history may be deflated against, by its id, and each workflow type's current one. A deflated
 * history starts with its dictionary's id (one latin1 character), so a type's dictionary can change while histories
 * deflated against the one before are kept: they still name theirs. Runs of one type share most of their bytes (type
 * and queue names, payload encodings, search attribute names, the SDK's metadata), so a scheduled post's ~1.5 KiB
 * history deflates to ~0.25 KiB against a history like it, ~0.6 KiB without.
 *
 * A type's dictionary is the one the embedding application gave for it (`useHistoryDictionary`: Herald gives recorded
 * histories of its own workflows, `src/temporal/history-dictionaries.ts`), else the first history of that type this
 * process deflated. That first one is whatever ran first: in Herald an immediate post's closed history, say, against
 * which a waiting scheduled post's deflated to ~425 bytes instead of ~240 (issue 15). Histories are never persisted
 * (temporal-dev keeps everything in memory), so the ids mean nothing beyond this process.
 */
const known: Buffer[] = [];
const current = new Map<string, number>();
/** One latin1 character names a dictionary, and this one none: past 255 dictionaries a new type's histories deflate against their own ids alone. */
const NO_DICTIONARY = 255;

/** The id of these bytes as a dictionary (the same bytes get the same id: a test process registers many times). */
function idOf(bytes: Uint8Array): number {
  // zlib reads only the last window's worth of a dictionary: a longer one is not kept whole for good.
  const kept = ownedCopy(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).subarray(-(1 << ZLIB_OPTIONS.windowBits)));
  const found = known.findIndex((dictionary) => dictionary.equals(kept));
  if (found >= 0) return found;
  if (known.length >= NO_DICTIONARY) return NO_DICTIONARY;
  return known.push(kept) - 1;
}

/**
 * Makes `bytes` (histories like the ones to come, most alike last) the dictionary of this workflow type's histories
 * deflated from now on, whatever history of it ran first. Histories deflated before keep theirs.
 */
export function useHistoryDictionary(workflowType: string, bytes: Uint8Array): void {
  current.set(workflowType, idOf(bytes));
}

/**
 * The dictionary a run's history is deflated against: its shared one (`id`), then strings of the run's own that its
 * history repeats (its workflow id, run id and start request id, which the run keeps anyway). Each of those is a
 * random UUID that deflates to ~20 bytes where it first appears; found in the dictionary it is a back-reference of
 * ~3 (a scheduled post's history: ~280 -> ~235 bytes, issue 15). They never change for a run, so its inflate
 * builds the same dictionary.
 */
function dictionaryOf(id: number, own: string): Buffer | undefined {
  const shared = known[id];
  if (!own) return shared;
  const ownBytes = Buffer.from(own);
  return shared ? Buffer.concat([shared, ownBytes]) : ownBytes;
}

/** A history read back from its deflated form: its bytes, each event's end, and which events are `marked`. */
interface InflatedHistory {
  bytes: Buffer;
  ends: number[];
  marked: number[];
}

/**
 * Deflates a history's events against their workflow type's dictionary, each framed by its length and whether it
 * is `marked` (one varint), so the deflated string is all a waiting run keeps: no list of event ends or marks beside
 * it (~150 bytes a run).
 */
export function deflateHistory(workflowType: string, own: string, bytes: Buffer, ends: readonly number[], marked: readonly number[]): string {
  let id = current.get(workflowType);
  if (id === undefined) current.set(workflowType, (id = idOf(bytes)));
  const dictionary = dictionaryOf(id, own);
  const framed = Buffer.allocUnsafe(bytes.length + ends.length * 5);
  let at = 0;
  ends.forEach((end, i) => {
    const start = i ? ends[i - 1]! : 0;
    at = writeVarint(framed, at, (end - start) * 2 + (marked.includes(i) ? 1 : 0));
    at += bytes.copy(framed, at, start, end);
  });
  // The id in the same bytes, made a string once: adding it as a string of its own would keep a cons string (32 bytes
  // more a run) until something reads it.
  return Buffer.concat([Buffer.of(id), deflateRawSync(framed.subarray(0, at), { ...ZLIB_OPTIONS, dictionary })]).toString('latin1');
}

/** A deflated history read back; its first character names the dictionary it was deflated against. */
export function inflateHistory(own: string, deflated: string): InflatedHistory {
  const stored = Buffer.from(deflated, 'latin1');
  const framed = inflateRawSync(stored.subarray(1), { ...ZLIB_OPTIONS, dictionary: dictionaryOf(stored[0]!, own) });
  // Memory of its own, not a slice of Node's shared pool: decoded events' bytes are views of it.
  const bytes = Buffer.allocUnsafeSlow(framed.length);
  const ends: number[] = [];
  const marked: number[] = [];
  let size = 0;
  for (let at = 0; at < framed.length; ) {
    const [frame, next] = readVarint(framed, at);
    const length = Math.floor(frame / 2);
    if (frame % 2) marked.push(ends.length);
    size += framed.copy(bytes, size, next, next + length);
    ends.push(size);
    at = next + length;
  }
  // `marked` of its exact length: it may become the run's own list again (a push onto [] reserves room for 17).
  return { bytes: bytes.subarray(0, size), ends, marked: marked.slice() };
}

function readVarint(from: Buffer, at: number): [value: number, next: number] {
  let value = 0;
  for (let scale = 1; ; scale *= 0x80) {
    const byte = from[at++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, at];
  }
}
