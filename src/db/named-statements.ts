import { sql, type RawBuilder } from 'kysely';
import { type Db, poolOf } from './index';
import { nextStatementName, runPrepared, type PreparedName } from './precompiled';

/**
 * Statements built per call whose text repeats (their rows go in as parameters: `rowsOf`), sent as named (prepared)
 * statements on the pool's connections, named by their text. PostgreSQL then parses each once per connection and
 * keeps its generic plan after five runs, where an unnamed statement is parsed and planned on every call:
 * `pg_stat_statements` gave the recording of a published post (a statement of three CTEs) 0.5 ms of planning a
 * publish (issue 15). `precompiled` does the same for statements built once per shape.
 *
 * Each call site has its own set (`namedStatements(maxTexts)`), so one whose texts vary more than expected (a
 * create's rows and columns) cannot take the names another needs: past `maxTexts` texts a statement is sent
 * unnamed, as before, never a growing list of statements on every connection. Any `Db` other than one from
 * `openDatabase` (a transaction) sends it unnamed.
 */
export function namedStatements(maxTexts: number) {
  const namesByText = new Map<string, PreparedName>();
  return {
    async execute<R>(db: Db, query: RawBuilder<R>): Promise<R[]> {
      const compiled = query.compile(db);
      const pool = poolOf(db);
      let prepared = namesByText.get(compiled.sql);
      if (!prepared && pool && namesByText.size < maxTexts) namesByText.set(compiled.sql, (prepared = { name: nextStatementName(), sql: compiled.sql }));
      if (!pool || !prepared) return (await db.executeQuery<R>(compiled)).rows;
      return runPrepared<R>(pool, prepared, compiled.parameters);
    },
  };
}

/**
 * Rows given as parameters, one per column, named `alias(columns...)` for a `from`: `unnest` of one array per column
 * for any number of rows, or a single `values` row of plain parameters for one. Either text is the same whatever the
 * values. One row is its own text so that its generic plan costs what a custom plan does: PostgreSQL estimates an
 * array parameter at ten elements in a generic plan, and where that made the generic plan dearer (`= any($1)` of one
 * id, in the answer's read) it planned the statement on every call.
 */
export function rowsOf(alias: string, columns: Record<string, { values: readonly unknown[]; type: string }>): RawBuilder<unknown> {
  const entries = Object.entries(columns);
  const names = sql.raw(`${alias}(${entries.map(([name]) => name).join(', ')})`);
  if (entries[0]![1].values.length === 1) {
    return sql`(values (${sql.join(entries.map(([, column]) => sql`${column.values[0]}::${sql.raw(column.type)}`))})) as ${names}`;
  }
  return sql`unnest(${sql.join(entries.map(([, column]) => sql`${column.values}::${sql.raw(column.type)}[]`))}) as ${names}`;
}
