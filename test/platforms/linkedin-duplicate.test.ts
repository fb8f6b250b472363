import assert from 'node:assert/strict';
import { createHttpClient, type HttpClient } from '../../src/net/http';
import { createLinkedInAdapter } from '../../src/platforms/linkedin';
import type { PlatformAdapter, PlatformContext, PublishRequest } from '../../src/platforms/types';
import { failureOf } from '../standins/graph';
import { linkedInDuplicate, startLinkedInStandIn } from '../standins/linkedin';

/**
 * LinkedIn's 422 "Content is a duplicate of urn:li:share:..." to a create. After an earlier attempt of the same post
 * that never reported back (`earlierAttemptOpen`), the post it names is most likely that attempt's: read and adopted
 * when it is, never sent again; otherwise the user learns which post LinkedIn took it for, in Herald's words.
 */
describe('linkedin: a duplicate refusal to a create', () => {
  let li: Awaited<ReturnType<typeof startLinkedInStandIn>>;
  let http: HttpClient;
  let adapter: PlatformAdapter;
  let member: PlatformContext;
  let page: PlatformContext;
  const fixedNow = new Date('2026-12-07T04:00:00.000Z');
  const failure = (kind: string, message: string) => (err: unknown) => {
    assert.deepEqual(failureOf(err), { name: 'PlatformFailure', platform: 'linkedin', kind, message, retryAfterSeconds: undefined });
    return true;
  };
  const request = (text: string, retry = false): PublishRequest => ({ postId: 'p', text, media: [], ...(retry ? { earlierAttemptOpen: true } : {}) });
  const url = (urn: string) => `https://www.linkedin.com/feed/update/${urn}/`;

  beforeEach(async () => {
    li = await startLinkedInStandIn();
    li.setClock(() => fixedNow);
    http = createHttpClient({ allowInsecure: true, timeoutMs: 1000 });
    adapter = createLinkedInAdapter({ http, origin: li.origin, now: () => fixedNow });
    member = { credentials: { access_token: li.member.token }, settings: { authorUrn: li.personUrn() } };
    page = { credentials: { access_token: li.member.token, organization_id: String(li.organization.id) }, settings: {} };
  });
  afterEach(async () => {
    await http.close();
    await li.stop();
  });

  it('a retry of an attempt that never reported back adopts the post LinkedIn names, after reading it: published once', async () => {
    const first = await adapter.publish(page, request('Made by the lost attempt'));
    const adopted = await adapter.publish(page, request('Made by the lost attempt', true));
    assert.deepEqual(adopted, { platformPostId: first.platformPostId, url: url(first.platformPostId) });
    assert.equal(li.posts.size, 1);
    assert.equal(li.standIn.calls('GET', `/rest/posts/${encodeURIComponent(first.platformPostId)}`).length, 1, 'read before it is adopted');
  });

  it('without an earlier attempt it is a refusal naming the post by its link; a comment\'s names none', async () => {
    const first = await adapter.publish(page, request('Said twice'));
    await assert.rejects(adapter.publish(page, request('Said twice')),
      failure('permanent', `LinkedIn refused the post: it repeats a recent post of this account (${url(first.platformPostId)}), and LinkedIn takes no duplicates; nothing was published.`));
    assert.equal(li.standIn.calls('GET', /^\/rest\/posts\//).length, 0, 'a first attempt reads nothing');
    li.standIn.inject({ method: 'POST', path: /\/comments$/ }, { kind: 'reply', response: linkedInDuplicate('urn:li:comment:(urn:li:activity:1,2)') });
    await assert.rejects(adapter.publish(page, { ...request('again'), replyTo: { platformPostId: first.platformPostId } }),
      failure('permanent', 'LinkedIn refused the reply: it repeats a comment LinkedIn already has from this account, and LinkedIn takes no duplicates; nothing was published.'));
  });

  it('the same text by this author but older than the lookup window is unconfirmed, not adopted and not a refusal', async () => {
    li.setClock(() => new Date(fixedNow.getTime() - 60 * 60_000));
    const old = await adapter.publish(page, request('Posted an hour ago'));
    li.setClock(() => fixedNow);
    await assert.rejects(adapter.publish(page, request('Posted an hour ago', true)),
      failure('unknown_outcome', `LinkedIn refused the post as a duplicate of ${url(old.platformPostId)}; an earlier attempt may have published it.`));
    assert.equal(li.posts.size, 1);
  });

  it('a post LinkedIn names that is gone (deleted, its text still refused) is a refusal saying so', async () => {
    li.duplicates.keepDeleted = true;
    const gone = await adapter.publish(page, request('Deleted since'));
    await adapter.delete(page, gone.platformPostId);
    await assert.rejects(adapter.publish(page, request('Deleted since', true)),
      failure('permanent', 'LinkedIn refused the post: it repeats a post of this account that is no longer on LinkedIn (LinkedIn refuses a deleted post\'s text for a while); nothing is on LinkedIn now.'));
    assert.equal(li.posts.size, 0);
  });

  it("a member's post cannot be read (r_member_social): unconfirmed, never a lost connection", async () => {
    const first = await adapter.publish(member, request('A member repeats'));
    await assert.rejects(adapter.publish(member, request('A member repeats', true)),
      failure('unknown_outcome', `LinkedIn refused the post as a duplicate of ${url(first.platformPostId)}; an earlier attempt may have published it.`));
  });

  it('a post of other text LinkedIn names is the plain refusal', async () => {
    const other = await adapter.publish(page, request('Something else entirely'));
    li.standIn.inject({ method: 'POST', path: '/rest/posts' }, { kind: 'reply', response: linkedInDuplicate(other.platformPostId) });
    await assert.rejects(adapter.publish(page, request('Near enough for LinkedIn', true)),
      failure('permanent', `LinkedIn refused the post: it repeats a recent post of this account (${url(other.platformPostId)}), and LinkedIn takes no duplicates; nothing was published.`));
  });
});
