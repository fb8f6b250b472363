/**
 * Grapheme clusters in time linear in the text. V8 copies the whole text being segmented into every segment
 * `Intl.Segmenter` hands out (by iteration or `containing`), so segmenting a text at once is quadratic: 20,000
 * clusters took a second, and a 1 MB request body of 200,000 took the heap past 4 GB and the process down. A long
 * text is segmented a chunk at a time instead. A chunk's last cluster may go on past the chunk: it is segmented again
 * as the start of the next one. Its start is a true boundary, since every rule decides a boundary from what precedes
 * it and the one code point after it, both inside the chunk (a chunk never ends between the halves of a pair).
 */
const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
const CHUNK_UNITS = 256;

function splitsPair(text: string, at: number): boolean {
  const high = text.charCodeAt(at - 1);
  const low = text.charCodeAt(at);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}

/**
 * Calls `visit(start, end)` (UTF-16 offsets, end exclusive) for each cluster from `from`, which must be a cluster
 * boundary, to the end of the text or until `visit` returns false. `chunkUnits`: tests segment in tiny chunks.
 */
export function forEachCluster(text: string, from: number, visit: (start: number, end: number) => boolean | void, chunkUnits = CHUNK_UNITS): void {
  let start = from;
  let size = chunkUnits;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    if (end < text.length && splitsPair(text, end)) end += 1;
    const last = end === text.length;
    let pending: { index: number; segment: string } | undefined;
    let visited = false;
    for (const segment of segmenter.segment(text.slice(start, end))) {
      if (pending) {
        if (visit(start + pending.index, start + pending.index + pending.segment.length) === false) return;
        visited = true;
      }
      pending = segment;
    }
    if (!pending) return;
    if (last) {
      visit(start + pending.index, start + pending.index + pending.segment.length);
      return;
    }
    // One cluster longer than the chunk: segment a longer one.
    if (!visited) {
      size *= 2;
      continue;
    }
    start += pending.index;
    size = chunkUnits;
  }
}

/** How many grapheme clusters `text` holds. ASCII needs no segmenter: each character is a cluster, but CR LF one. */
export function graphemeCount(text: string): number {
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(text)) return text.length - (text.match(/\r\n/g)?.length ?? 0);
  let count = 0;
  forEachCluster(text, 0, () => {
    count += 1;
  });
  return count;
}
