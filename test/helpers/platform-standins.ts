/**
 * All eight platform stand-ins at once, and the real adapters pointed at them, for API tests:
 *
 *   startPlatformStandIns(): Promise<PlatformStandIns>
 *     PlatformStandIns: { x, bluesky, mastodon, telegram, facebook, instagram, threads, linkedin (each the stand-in's
 *                         handle from test/standins/<slug>.ts); adapters: PlatformAdapters; stop() }
 *     Pass `adapters` to `startApi({ deps: { adapters } })`.
 *
 * The adapters come from `createPlatformAdapters` (the production registry) with the stand-ins' origins. One
 * difference: Instagram `via: facebook` goes to the Instagram stand-in's Facebook-flavoured origin, because the
 * Facebook stand-in serves only Page endpoints (in production both are graph.facebook.com).
 */
import { createHttpClient } from '../../src/net/http';
import { createInstagramAdapter } from '../../src/platforms/instagram';
import { createPlatformAdapters, type PlatformAdapters } from '../../src/platforms/registry';
import { startBlueskyStandIn } from '../standins/bluesky';
import { startFacebookStandIn } from '../standins/facebook';
import { startInstagramStandIn } from '../standins/instagram';
import { startLinkedInStandIn } from '../standins/linkedin';
import { startMastodonStandIn } from '../standins/mastodon';
import { startTelegramStandIn } from '../standins/telegram';
import { startThreadsStandIn } from '../standins/threads';
import { startXStandIn } from '../standins/x';

export async function startPlatformStandIns() {
  const [x, bluesky, mastodon, telegram, facebook, instagram, threads, linkedin] = await Promise.all([
    startXStandIn(),
    startBlueskyStandIn(),
    startMastodonStandIn(),
    startTelegramStandIn(),
    startFacebookStandIn(),
    startInstagramStandIn(),
    startThreadsStandIn(),
    startLinkedInStandIn(),
  ]);
  const http = createHttpClient({ allowInsecure: true, timeoutMs: 5_000 });
  const sleep = () => Promise.resolve();
  const registry = createPlatformAdapters({
    http,
    platformUrls: {
      x: x.origin,
      telegram: telegram.origin,
      facebook: facebook.origin,
      instagram: instagram.origin,
      threads: threads.origin,
      linkedin: linkedin.origin,
    },
    allowInsecureUrls: true,
    sleep,
  });
  const adapters: PlatformAdapters = {
    ...registry,
    instagram: createInstagramAdapter({ http, origin: instagram.origin, facebookOrigin: instagram.facebookOrigin, sleep }),
  };
  return {
    x,
    bluesky,
    mastodon,
    telegram,
    facebook,
    instagram,
    threads,
    linkedin,
    adapters,
    async stop() {
      await Promise.all([x, bluesky, mastodon, telegram, facebook, instagram, threads, linkedin].map((s) => s.stop()));
      await http.close();
    },
  };
}

export type PlatformStandIns = Awaited<ReturnType<typeof startPlatformStandIns>>;
