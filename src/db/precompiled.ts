import type { Compilable, CompiledQuery } from 'kysely';
import type { Db } from './index';

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
 */
interface PrecompiledQuery<V extends Record<string, unknown>, R> {
  execute(db: Db, values: V, variant?: string): Promise<R[]>;
}

interface Template {
  compiled: CompiledQuery;
  /** For each parameter of the compiled query: the name of the value it takes, or null for a constant of `build`. */
  slots: Array<string | null>;
}

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
    return { compiled, slots };
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
      return (await db.executeQuery<R>({ ...compiled, parameters })).rows;
    },
  };
}
