import { metricKeys, type MetricKey, type PostMetrics } from './types';

/**
 * Where each of Herald's metric keys is read in a platform's answer: a dotted path into the answer (or into the flat
 * object an adapter's `metrics.ts` makes of it). A key left out is one the platform does not report: `null`, never 0.
 * Each platform keeps its mapping as data beside its adapter (`<platform>/metrics.ts`).
 */
export type MetricsMapping = Partial<Record<MetricKey, string>>;

export function mapMetrics(mapping: MetricsMapping, source: unknown): PostMetrics {
  const metrics = {} as PostMetrics;
  for (const key of metricKeys) {
    const path = mapping[key];
    metrics[key] = path === undefined ? null : countAt(source, path);
  }
  return metrics;
}

/** A count the platform left out, or gave as something other than a whole non-negative number, is unknown: null. */
function countAt(source: unknown, path: string): number | null {
  let value = source;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return null;
    value = (value as Record<string, unknown>)[part];
  }
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}
