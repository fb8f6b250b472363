import type { ResponseHeaders } from '../../net/http';

/**
 * Graph throttling headers (protocols.md section 5): `X-App-Usage` and `X-Page-Usage` carry percentages,
 * `X-Business-Use-Case-Usage` carries `{ "<id>": [{ type, call_count, total_cputime, total_time,
 * estimated_time_to_regain_access }] }` with the wait in minutes. Graph sends no Retry-After; the estimate is the
 * only wait the platform names, so it is the one we report (the longest across every entry of every header).
 */

const usageHeaders = ['x-business-use-case-usage', 'x-page-usage', 'x-app-usage'] as const;

export function graphRateLimitWaitSeconds(headers: ResponseHeaders): number | undefined {
  let minutes = 0;
  for (const name of usageHeaders) {
    const raw = headers.get(name);
    if (!raw) continue;
    for (const entry of usageEntries(raw)) {
      const estimate = Number(entry.estimated_time_to_regain_access);
      if (Number.isFinite(estimate) && estimate > minutes) minutes = estimate;
    }
  }
  return minutes > 0 ? minutes * 60 : undefined;
}

type UsageEntry = Record<string, unknown>;

/** App/Page usage is one object; business-use-case usage maps ids to arrays of objects. */
function usageEntries(raw: string): UsageEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!parsed || typeof parsed !== 'object') return [];
  const values = Object.values(parsed as Record<string, unknown>);
  const nested = values.filter(Array.isArray).flat() as UsageEntry[];
  return nested.length > 0 ? nested.filter((e) => e && typeof e === 'object') : [parsed as UsageEntry];
}
