import type { Express } from 'express';
import { sql } from 'kysely';
import { ApiError } from '../../src/errors';
import type { AppDeps, ReadinessProbe } from '../deps';

const probeTimeoutMs = 3_000;

/** `GET /healthz`: the process answers. `GET /readyz`: every dependency answers (503 envelope naming the failures). */
export function mountHealth(app: Express, deps: AppDeps): void {
  const probes: ReadinessProbe[] = [
    { name: 'database', check: async () => void (await sql`select 1`.execute(deps.db)) },
    ...(deps.probes ?? []),
  ];

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.get('/readyz', async (req, res) => {
    const results = await Promise.all(
      probes.map(async (probe) => {
        try {
          await withTimeout(probe.check(), probeTimeoutMs, `${probe.name} did not answer within ${probeTimeoutMs} ms`);
          return [probe.name, 'ok'] as const;
        } catch (err) {
          req.log?.warn({ probe: probe.name, err }, 'readiness probe failed');
          return [probe.name, err instanceof Error && err.message ? err.message : 'unreachable'] as const;
        }
      }),
    );
    const checks = Object.fromEntries(results);
    const failing = results.filter(([, state]) => state !== 'ok').map(([name]) => name);
    if (failing.length > 0) {
      throw new ApiError('service_unavailable', `Not ready: ${failing.join(', ')} unreachable`, {
        checks: Object.fromEntries(results.map(([name, state]) => [name, state === 'ok' ? 'ok' : 'unreachable'])),
      });
    }
    res.json({ status: 'ok', checks });
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
