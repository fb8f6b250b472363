/** The value at percentile `p` (0–100) of samples sorted ascending: the nearest rank, never past the last sample. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
