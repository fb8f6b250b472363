import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { Connected } from '../db/connect';

/**
 * What every `herald` command shares (`main.ts` runs them; `credentials.ts` holds the credential ones): its errors
 * (exit 2 and the usage for a `UsageError`, exit 1 for a `CommandError`), its flags and their checks.
 */

export class UsageError extends Error {}
export class CommandError extends Error {}

export type Command = (args: string[], db: () => Promise<Connected>) => Promise<unknown>;

export const uuid = (flag: string) => z.guid({ error: `${flag} must be a UUID` });

type Flags = Record<string, string | undefined>;

export function flags(args: string[], names: string[]): Flags {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])),
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
    return values as Flags;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

export function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new UsageError(result.error.issues[0].message);
  return result.data;
}
