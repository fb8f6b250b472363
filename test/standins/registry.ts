/**
 * Every platform stand-in, by slug, for running them by hand (`npm run standins` prints their origins).
 * One line per platform; each engineer adds theirs.
 */
import { startTelegramStandIn } from './telegram';
import { startFacebookStandIn } from './facebook';
import { startBlueskyStandIn } from './bluesky';
import { startXStandIn } from './x';
import { startInstagramStandIn } from './instagram';
import { startThreadsStandIn } from './threads';
import { startMastodonStandIn } from './mastodon';
import { startLinkedInStandIn } from './linkedin';

export const standIns: Record<string, () => Promise<{ origin: string; stop(): Promise<void> }>> = {
  telegram: startTelegramStandIn,
  facebook: startFacebookStandIn,
  bluesky: () => startBlueskyStandIn({ demoAccount: true }),
  x: startXStandIn,
  instagram: startInstagramStandIn,
  threads: startThreadsStandIn,
  mastodon: startMastodonStandIn,
  linkedin: startLinkedInStandIn,
};
