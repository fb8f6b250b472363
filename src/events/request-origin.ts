import { AsyncLocalStorage } from 'node:async_hooks';

/** The API request that caused a change, as an event's `request` member carries it. */
export interface RequestOrigin {
  id: string;
  idempotency_key: string | null;
}

const storage = new AsyncLocalStorage<RequestOrigin>();

/**
 * Runs an API route's handler with its request bound, so that the repositories' writes record which request caused
 * their events without every service passing it along. Worker-side writes run outside any request.
 */
export function withRequestOrigin<T>(origin: RequestOrigin, run: () => Promise<T>): Promise<T> {
  return storage.run(origin, run);
}

/** The request being served, or null for the service's own work (workflows, reconcilers, syncs). */
export function currentRequestOrigin(): RequestOrigin | null {
  return storage.getStore() ?? null;
}
