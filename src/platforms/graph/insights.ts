import { graphPath, type GraphClient } from './client';

/** One entry of a Graph insights answer (Facebook, Instagram, Threads share the shape). */
interface GraphInsight {
  name: string;
  period?: string;
  values?: Array<{ value?: unknown }>;
  total_value?: { value?: unknown };
}

/**
 * `GET /{object}/insights?metric=a,b` as `{ a: n, b: m }`. A metric the platform leaves out of `data` stays absent
 * (Instagram: "unavailable data is an empty set, not 0"), so the mapping makes it null rather than 0.
 */
export async function readGraphInsights(client: GraphClient, objectId: string, metrics: readonly string[], signal?: AbortSignal): Promise<Record<string, unknown>> {
  const answer = await client.get<{ data?: GraphInsight[] }>(graphPath(objectId, 'insights'), { metric: metrics.join(',') }, 'metrics', signal);
  const byName: Record<string, unknown> = {};
  for (const insight of answer.data ?? []) byName[insight.name] = insight.values?.[0]?.value ?? insight.total_value?.value;
  return byName;
}
