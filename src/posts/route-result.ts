/** What a posts service function answers; the route hands it to Express as is (same shape as `api/route.ts`). */
export interface RouteResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}
