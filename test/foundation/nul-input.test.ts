import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AnyRoute } from '../../api/route';
import { apiRoutes } from '../../api/routes';
import { type TestApi, startApi } from '../helpers/api';

/**
 * PostgreSQL refuses U+0000 in `text` and `jsonb`, so a NUL that reached a query was a 500. Every string a route
 * declares (path, query and body, found by walking the declarations' JSON Schema) is sent holding one, alone: the
 * answer must be 400 `bad_request` naming that field. A new route or field is covered without editing this test.
 */

type Step = { property: string } | { item: true } | { member: true };
interface StringField {
  route: AnyRoute;
  part: 'params' | 'query' | 'body';
  steps: Step[];
}

type JsonSchema = {
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
};

/** Every path to a string in `schema` (a `$ref` is followed once per path, so recursive schemas end). */
function stringPaths(root: JsonSchema): Step[][] {
  const found = new Map<string, Step[]>();
  const walk = (schema: JsonSchema, steps: Step[], refs: ReadonlySet<string>) => {
    if (schema.$ref) {
      if (refs.has(schema.$ref)) return;
      const name = schema.$ref.replace('#/$defs/', '');
      const target = root.$defs?.[name];
      assert.ok(target, `unresolved ${schema.$ref}`);
      walk(target, steps, new Set([...refs, schema.$ref]));
    }
    for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) walk(branch, steps, refs);
    const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
    if (types.includes('string')) found.set(JSON.stringify(steps), steps);
    for (const [property, value] of Object.entries(schema.properties ?? {})) walk(value, [...steps, { property }], refs);
    if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, [...steps, { member: true }], refs);
    if (schema.items) walk(schema.items, [...steps, { item: true }], refs);
    for (const item of schema.prefixItems ?? []) walk(item, [...steps, { item: true }], refs);
  };
  walk(root, [], new Set());
  return [...found.values()];
}

function declaredStringFields(routes: readonly AnyRoute[]): StringField[] {
  const fields: StringField[] = [];
  for (const route of routes) {
    for (const part of ['params', 'query', 'body'] as const) {
      const schema = route[part];
      if (!schema) continue;
      const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
      for (const steps of stringPaths(json)) fields.push({ route, part, steps });
    }
  }
  return fields;
}

const nul = 'a\u0000b';

/** `steps` as the error message writes it: `posts[0].text`, `account_configurations.k.media[0].url`. */
function fieldName(steps: Step[]): string {
  let out = '';
  for (const step of steps) {
    if ('item' in step) out += '[0]';
    else out += `${out === '' ? '' : '.'}${'property' in step ? step.property : 'k'}`;
  }
  return out;
}

/** A value holding `leaf` at `steps` and nothing else. */
function valueAt(steps: Step[], leaf: unknown): unknown {
  if (steps.length === 0) return leaf;
  const [first, ...rest] = steps;
  const inner = valueAt(rest, leaf);
  if ('item' in first) return [inner];
  return { ['property' in first ? first.property : 'k']: inner };
}

function requestFor(field: StringField): { method: string; path: string; body?: unknown } {
  const top = field.steps[0];
  const name = top && 'property' in top ? top.property : '';
  const path = field.route.path.replace(/:([A-Za-z0-9_]+)/g, (_, param: string) =>
    field.part === 'params' && param === name ? encodeURIComponent(nul) : randomUUID(),
  );
  const method = field.route.method.toUpperCase();
  if (field.part === 'query') return { method, path: `/api/v1${path}?${name}=${encodeURIComponent(nul)}` };
  if (field.part === 'body') return { method, path: `/api/v1${path}`, body: valueAt(field.steps, nul) };
  return { method, path: `/api/v1${path}`, body: method === 'GET' ? undefined : {} };
}

describe('NUL in any declared string', function () {
  this.timeout(180_000);
  let api: TestApi;
  before(async () => {
    api = await startApi({ plan: 'enterprise' });
  });
  after(() => api.close());

  it('finds the strings of every route (the walk itself works)', () => {
    const fields = declaredStringFields(apiRoutes);
    const names = new Set(fields.map((f) => `${f.route.method} ${f.route.path} ${f.part} ${fieldName(f.steps)}`));
    for (const expected of [
      'post /keys body name',
      'post /webhooks body description',
      'get /posts/:id/comments query parent_id',
      'get /posts/:id/comments query since',
      'get /webhooks/:id/deliveries query event_id',
      'post /posts body text',
      'post /threads body posts[0].text',
      'delete /posts/:id/comments/:comment_id params comment_id',
    ]) {
      assert.ok(names.has(expected), `${expected} not found among ${fields.length} fields`);
    }
  });

  it('answers 400 bad_request naming the field, never 500, for every string of every route', async () => {
    const failures: string[] = [];
    for (const field of declaredStringFields(apiRoutes)) {
      const { method, path, body } = requestFor(field);
      const res = await api.request(method, path, body === undefined ? {} : { body });
      const expected = `${fieldName(field.steps)}: must not contain the NUL character (\\u0000)`;
      if (res.status !== 400 || res.body?.error?.code !== 'bad_request' || res.body.error.message !== expected) {
        failures.push(`${method} ${path} ${field.part} ${JSON.stringify(body) ?? ''} → ${res.status} ${res.text.slice(0, 160)}`);
      }
    }
    assert.deepEqual(failures, []);
  });

  it('refuses a NUL in a member name, and one nested deeper than the stack', async () => {
    const named = await api.request('POST', '/api/v1/webhooks', { body: { url: 'https://example.com/h', 'a\u0000': 1 } });
    assert.deepEqual([named.status, named.body.error.message], [400, 'Request body: member names must not contain the NUL character (\\u0000)']);
    const deep = await api.request('POST', '/api/v1/keys', { rawBody: `{"name":${'['.repeat(20_000)}"\\u0000"${']'.repeat(20_000)}}`, headers: { 'content-type': 'application/json' } });
    assert.equal(deep.status, 400, deep.text.slice(0, 200));
    assert.match(deep.body.error.message, /^name(\[0\])+: must not contain the NUL character/);
  });
});
