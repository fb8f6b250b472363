import { sql, type Compilable, type CompiledQuery, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type pg from 'pg';
import { type Db, poolOf } from './index';

/**
 * A Kysely query built and compiled once per shape and database, then sent with each call's values. Kysely builds a
 * tree of frozen nodes and compiles it to SQL on every call otherwise, which on a read that is one statement was a
 * tenth of the API's own CPU and much of its garbage (issue 15, README "Figures").
 *
 * The shape is which of `values` are defined, plus `variant`. `build` is called once per shape with stand-ins for
 * the defined values and must pass each through as one query parameter (`where(col, '=', value)`, `limit(value)`):
 * it may test whether a value is defined, never what it is, and never spread one (`in` with an array); anything
 * else that changes the query belongs in `variant`. The first call of a shape checks that every value became
 * exactly one parameter (a spread one compiles to `in $1`, which PostgreSQL refuses), so a builder that breaks the
 * rule fails loudly instead of sending another call's values.
 *
 * On a `Db` from `openDatabase` each shape is a named (prepared) statement of the pool's connections: PostgreSQL
 * parses it once per connection and, after five runs, may keep a generic plan, instead of parsing and planning every
 * call; that was most of a short read's database CPU (issue 15, README "Request path cost"). A constant that decides
 * which index a generic plan may use (a partial index's predicate) belongs in the SQL as a literal (`sql.lit`), not
 * as a parameter. A statement whose result columns changed under it (a migration added a column to a table read with
 * `*`, while this process runs) is prepared again under a new name. Other `Db`s (a transaction, a test's Kysely with
 * a log hook) send the compiled query through Kysely, unnamed.
 */
interface PrecompiledQuery<V extends Record<string, unknown>, R> {
  execute(db: Db, values: V, variant?: string): Promise<R[]>;
}

/** A prepared statement's text and its name on the pool's connections (a new name when its result type changed). */
export interface PreparedName {
  name: string;
  sql: string;
}

interface Template extends PreparedName {
  compiled: CompiledQuery;
  /** For each parameter of the compiled query: the name of the value it takes, or null for a constant of `build`. */
  slots: Array<string | null>;
}

let statementsNamed = 0;
export const nextStatementName = () => `herald-precompiled-${++statementsNamed}`;

export function precompiled<V extends Record<string, unknown>, R>(build: (db: Db, values: V, variant: string) => Compilable<R>): PrecompiledQuery<V, R> {
  const templates = new WeakMap<Db, Map<string, Template>>();

  function compile(db: Db, names: string[], variant: string): Template {
    const standIns = new Map(names.map((name) => [{ standIn: name } as unknown, name]));
    const compiled = build(db, Object.fromEntries([...standIns].map(([standIn, name]) => [name, standIn])) as V, variant).compile();
    const slots = compiled.parameters.map((parameter) => standIns.get(parameter) ?? null);
    const used = slots.filter((slot) => slot !== null);
    if (used.length !== names.length || new Set(used).size !== names.length) {
      throw new Error(`precompiled query (${variant}|${names.join(',')}): each value must become exactly one parameter`);
    }
    return { compiled, slots, name: nextStatementName(), sql: compiled.sql };
  }

  return {
    async execute(db, values, variant = '') {
      const names = Object.keys(values).filter((name) => values[name] !== undefined);
      const shape = `${variant}|${names.join(',')}`;
      let byShape = templates.get(db);
      if (!byShape) templates.set(db, (byShape = new Map()));
      let template = byShape.get(shape);
      if (!template) byShape.set(shape, (template = compile(db, names, variant)));
      const { compiled, slots } = template;
      const parameters = slots.map((slot, i) => (slot === null ? compiled.parameters[i] : values[slot]));
      const pool = poolOf(db);
      if (!pool) return (await db.executeQuery<R>({ ...compiled, parameters })).rows;
      return runPrepared<R>(pool, template, parameters);
    },
  };
}

export async function runPrepared<R>(pool: pg.Pool, prepared: PreparedName, parameters: readonly unknown[]): Promise<R[]> {
  const send = () => pool.query({ name: prepared.name, text: prepared.sql, values: parameters as unknown[] });
  try {
    return (await send()).rows as R[];
  } catch (err) {
    if (!resultTypeChanged(err)) throw err;
    prepared.name = nextStatementName();
    return (await send()).rows as R[];
  }
}

/** PostgreSQL refuses to run a prepared statement whose result columns changed since it was prepared. */
function resultTypeChanged(err: unknown): boolean {
  const { code, message } = err as { code?: unknown; message?: unknown };
  return code === '0A000' && typeof message === 'string' && message.includes('cached plan must not change result type');
}

/**
 * Ids for a precompiled statement: one (`id`) or many (`ids`), each its own shape. PostgreSQL estimates
 * `= any($1::uuid[])` at ten elements in a generic plan and one in a custom plan of one id, so it found the generic
 * plan dearer and planned the statement again on every call, one post (almost every call) included:
 * `pg_stat_statements` gave the attempt's mark and the answer's read 0.3 and 0.2 ms of planning a publish. `id = $1`
 * costs the same either way, and PostgreSQL keeps the generic plan after five runs.
 */
export type OneOrManyIds = { id: string; ids?: undefined } | { ids: readonly string[]; id?: undefined };

export function oneOrManyIds(ids: readonly string[]): OneOrManyIds {
  return ids.length === 1 ? { id: ids[0]! } : { ids };
}

/** `column` is the id, or one of the ids, of `values` (built once per shape by `precompiled`). */
export function idIsOneOf(column: Expression<unknown>, values: OneOrManyIds): RawBuilder<SqlBool> {
  return values.id !== undefined ? sql<SqlBool>`${column} = ${values.id}` : sql<SqlBool>`${column} = any(${values.ids}::uuid[])`;
}

/**
 * `value` as a one-row subquery (an InitPlan), so that PostgreSQL plans the statement without looking at it. A
 * custom plan estimates a parameter from the column's statistics (a heavy user's rows, a common status) and the
 * generic plan from the column's average; where the two costs differ, PostgreSQL kept planning every call
 * (`pg_prepared_statements`: 0 generic plans). Unseen, both estimate alike and the generic plan is kept after five
 * runs. For a filter whose index is right whatever the value (a listing read off its own index), not for one whose
 * value decides the plan.
 */
export function unseenByPlanner<T>(value: T, type: 'uuid' | 'text' | 'bigint'): RawBuilder<T> {
  return sql<T>`(select ${value}::${sql.raw(type)})`;
}
