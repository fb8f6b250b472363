import assert from 'node:assert/strict';
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { ApiError } from '../../src/errors';
import * as requestSchemas from '../../src/posts/rules/request-schemas';
import * as responseSchemas from '../../src/posts/rules/response-schemas';
import { CreatePostBodySchema, CreateThreadBodySchema, UpdatePostBodySchema } from '../../src/posts/rules/request-schemas';
import { parseBody } from '../../src/posts/rules/zod-error';

const A = '3f1c2a4e-8b7d-4c6a-9e1f-0a2b3c4d5e6f';

function badRequest(message: string) {
  return (err: unknown) => {
    assert.ok(err instanceof ApiError, `expected ApiError, got ${String(err)}`);
    assert.deepEqual(err.toEnvelope(), { error: { code: 'bad_request', message } });
    assert.equal(err.status, 400);
    return true;
  };
}

describe('posts rules: request schemas and the zod error mapping', () => {
  it('accepts a full create body', () => {
    const body = parseBody(CreatePostBodySchema, {
      account_ids: [A],
      account_configurations: { [A]: { text: 'hi', first_comment: '', media_urls: ['https://e.com/a.png'] } },
      text: 'hello',
      media: [{ url: 'https://e.com/a.jpg', alt: 'a cat' }, { id: A }],
      first_comment: 'c',
      configuration: { instagram: { placement: 'story' } },
      schedule_at: '2026-05-01T09:30:00Z',
      timezone: 'Europe/Berlin',
      draft: false,
    });
    assert.equal(body.text, 'hello');
  });

  it('refuses an unknown top-level field, naming it', () => {
    assert.throws(() => parseBody(CreatePostBodySchema, { account_id: A, text: 'x', colour: 'red' }), badRequest('Unknown field: colour'));
  });

  it('reports unknown fields before other problems', () => {
    assert.throws(() => parseBody(CreatePostBodySchema, { account_id: 'nope', text: 5, foo: 1, bar: 2 }), badRequest('Unknown fields: foo, bar'));
  });

  it('refuses scheduled_at and suggests schedule_at', () => {
    assert.throws(
      () => parseBody(CreatePostBodySchema, { account_id: A, text: 'x', scheduled_at: '2026-05-01T09:30:00Z' }),
      badRequest('scheduled_at: not accepted; the request field is schedule_at (scheduled_at is its name in responses)'),
    );
  });

  it('refuses group_id', () => {
    assert.throws(
      () => parseBody(CreatePostBodySchema, { account_ids: [A], text: 'x', group_id: A }),
      badRequest('group_id: cannot be sent; the service sets it when a request names account_ids'),
    );
    assert.throws(
      () => parseBody(UpdatePostBodySchema, { text: 'x', group_id: A }),
      badRequest('group_id: cannot be sent; the service sets it when a request names account_ids'),
    );
  });

  it('names malformed fields', () => {
    assert.throws(() => parseBody(CreatePostBodySchema, { account_id: 'abc', text: 'x' }), badRequest('account_id: must be a UUID'));
    assert.throws(() => parseBody(CreatePostBodySchema, { account_ids: [A, 'x'], text: 'x' }), badRequest('account_ids[1]: must be a UUID'));
    assert.throws(() => parseBody(CreatePostBodySchema, { account_id: A, text: 7 }), badRequest('text: must be a string'));
    assert.throws(() => parseBody(CreatePostBodySchema, { account_id: A, text: 'x', draft: 'yes' }), badRequest('draft: must be a boolean'));
    assert.throws(() => parseBody(CreatePostBodySchema, { account_id: A, text: 'x', media_urls: ['ftp://e.com/a.png'] }), badRequest('media_urls[0]: must be an http(s) URL'));
    assert.throws(() => parseBody(CreatePostBodySchema, { account_id: A, text: 'x', media: [{ alt: 'a' }] }), badRequest('media[0]: needs exactly one of id or url'));
    assert.throws(() => parseBody(CreatePostBodySchema, { account_id: A, text: 'x', media: [{ url: 'https://e.com/a.png', id: A }] }), badRequest('media[0]: needs exactly one of id or url'));
    assert.throws(() => parseBody(CreatePostBodySchema, { account_id: A, text: 'x', media: [{ url: 'https://e.com/a.png', caption: 'c' }] }), badRequest('Unknown field: media[0].caption'));
    assert.throws(() => parseBody(CreatePostBodySchema, { account_id: A, text: 'x', configuration: { instagram: 'story' } }), badRequest('configuration.instagram: must be an object'));
    assert.throws(() => parseBody(CreatePostBodySchema, { account_ids: [A], text: 'x', account_configurations: { [A]: { txt: 'y' } } }), badRequest(`Unknown field: account_configurations.${A}.txt`));
    assert.throws(() => parseBody(CreatePostBodySchema, 'text'), badRequest('Request body: Invalid input: expected object, received string'));
  });

  it('thread parts: posts[0].text style messages', () => {
    assert.throws(() => parseBody(CreateThreadBodySchema, { account_id: A }), badRequest('posts is required'));
    assert.throws(() => parseBody(CreateThreadBodySchema, { account_id: A, posts: [] }), badRequest('posts: needs at least one part'));
    assert.throws(() => parseBody(CreateThreadBodySchema, { account_id: A, posts: [{ text: 'a' }, { text: 3 }] }), badRequest('posts[1].text: must be a string'));
    assert.throws(() => parseBody(CreateThreadBodySchema, { account_id: A, posts: [{ text: 'a', media_urls: 'x' }] }), badRequest('posts[0].media_urls: must be an array'));
    assert.throws(() => parseBody(CreateThreadBodySchema, { account_id: A, posts: [{ body: 'a' }] }), badRequest('Unknown field: posts[0].body'));
    assert.throws(
      () => parseBody(CreateThreadBodySchema, { account_ids: [A], posts: [{ text: 'a' }], account_configurations: { [A]: { text: 'b' } } }),
      badRequest(`Unknown field: account_configurations.${A}.text`),
    );
  });

  it('update body: publish is accepted, account fields are not', () => {
    assert.deepEqual(parseBody(UpdatePostBodySchema, { publish: true }), { publish: true });
    assert.throws(() => parseBody(UpdatePostBodySchema, { account_id: A }), badRequest('Unknown field: account_id'));
  });

  it('every schema registers in an OpenAPI 3.1 document', () => {
    // As the API registers them: inside paths; `.meta({ id })` turns each into a named component.
    const registry = new OpenAPIRegistry();
    for (const [name, schema] of Object.entries({ ...requestSchemas, ...responseSchemas })) {
      if (!name.endsWith('Schema')) continue;
      registry.registerPath({
        method: 'post',
        path: `/probe/${name}`,
        request: { body: { content: { 'application/json': { schema: schema as never } } } },
        responses: { 200: { description: 'ok', content: { 'application/json': { schema: schema as never } } } },
      });
    }
    const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({ openapi: '3.1.0', info: { title: 'Herald', version: '1' } });
    const schemas = doc.components?.schemas ?? {};
    assert.equal(JSON.stringify(schemas.CreatePostBody).includes('schedule_at'), true);
    for (const id of ['CreatePostBody', 'UpdatePostBody', 'CreateThreadBody', 'Post', 'UpdatedPost', 'FanOutResult', 'Warning', 'ThreadRollback', 'ThreadFanOutResult']) {
      assert.ok(schemas[id], `${id} missing from ${Object.keys(schemas).join(', ')}`);
    }
    // What a PATCH answers besides the post (publishing-api.md "Post object"), so a generated client keeps them.
    const updatedFields = JSON.stringify(schemas.UpdatedPost);
    for (const field of ['rescheduled_post_ids', 'promoted_from_draft_ids', 'promoted_from_draft_id']) assert.ok(updatedFields.includes(field), `UpdatedPost lacks ${field}`);
  });
});
