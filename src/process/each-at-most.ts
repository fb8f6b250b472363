/** `each` over `items`, at most `atOnce` at a time, in order of start, until `signal` aborts (no new item then). */
export async function eachAtMost<T>(items: readonly T[], atOnce: number, signal: AbortSignal | undefined, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal?.aborted) await each(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, worker));
}
