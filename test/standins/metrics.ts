/**
 * Post metrics held by the stand-ins (protocols.md section 12 "Stand-ins"): a test sets a post's numbers in Herald's
 * keys with `<standIn>.setMetrics(platformPostId, { likes: 3, ... })`; each stand-in renders them in its platform's
 * native fields on its metrics endpoint. A number never set is the platform's own default for that field.
 * Graph helpers: deprecated metrics answer Graph's invalid-metric error; valid metrics never set answer 0.
 */
import type { MetricKey } from '../../src/platforms/types';
import type { StandInResponse } from './kit';
import { graphError } from './graph';

type HeraldMetricValues = Partial<Record<MetricKey, number>>;

export class MetricsBook {
  private readonly byPost = new Map<string, HeraldMetricValues>();

  set(platformPostId: string, metrics: HeraldMetricValues): void {
    this.byPost.set(platformPostId, { ...this.byPost.get(platformPostId), ...metrics });
  }

  get(platformPostId: string): HeraldMetricValues {
    return this.byPost.get(platformPostId) ?? {};
  }
}

/**
 * A Graph insights answer for `metric=a,b`: one entry per metric, `period: lifetime`, in the documented shape.
 * `omitted` metrics are left out of `data` (Instagram's "unavailable data is an empty set").
 */
export function graphInsightsAnswer(
  objectId: string,
  asked: string | undefined,
  opts: { values: Record<string, number | undefined>; valid: readonly string[]; deprecated?: readonly string[]; omitted?: readonly string[] },
): StandInResponse {
  const names = (asked ?? '').split(',').map((n) => n.trim()).filter(Boolean);
  if (names.length === 0) return graphError({ code: 3001, subcode: 1504028, type: 'OAuthException', message: 'Invalid query: No metric was specified' });
  const invalid = names.find((n) => opts.deprecated?.includes(n) || !opts.valid.includes(n));
  if (invalid) {
    return graphError({ code: 100, type: 'OAuthException', message: `(#100) The value must be a valid insights metric: ${invalid}` });
  }
  const data = names
    .filter((n) => !opts.omitted?.includes(n))
    .map((name) => ({
      name,
      period: 'lifetime',
      values: [{ value: opts.values[name] ?? 0 }],
      title: name,
      description: `Lifetime ${name}`,
      id: `${objectId}/insights/${name}/lifetime`,
    }));
  return { json: { data, paging: {} } };
}
