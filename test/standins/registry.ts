/**
 * Every platform stand-in, by slug, for running them by hand (`npm run standins` prints their origins). Each starts
 * with one demo account and gives the `POST /api/v1/accounts` body that connects it (decisions.md's connect fields),
 * so a Herald pointed at the stand-ins can publish at once. One entry per platform; each engineer adds theirs.
 */
import { startTelegramStandIn } from './telegram';
import { startFacebookStandIn } from './facebook';
import { startBlueskyStandIn } from './bluesky';
import { startXStandIn } from './x';
import { startInstagramStandIn } from './instagram';
import { startThreadsStandIn } from './threads';
import { startMastodonStandIn } from './mastodon';
import { startLinkedInStandIn } from './linkedin';

interface ByHandStandIn {
  origin: string;
  /** The body of `POST /api/v1/accounts` that connects this stand-in's demo account. */
  connect: Record<string, string>;
  stop(): Promise<void>;
}

/** Shaped as BotFather gives them (digits, a colon, 35 characters), which is what Herald's connect accepts. */
const demoBotToken = '7000000001:AAHdemoDemoDemoDemoDemoDemoDemoDemo';

export const standIns: Record<string, () => Promise<ByHandStandIn>> = {
  telegram: async () => {
    const standIn = await startTelegramStandIn();
    standIn.addBot(demoBotToken);
    standIn.addChat({ username: 'herald_demo', title: 'Herald demo channel' });
    return { ...standIn, connect: { platform: 'telegram', bot_token: demoBotToken, chat_id: '@herald_demo' } };
  },
  facebook: async () => {
    const standIn = await startFacebookStandIn();
    return { ...standIn, connect: { platform: 'facebook', page_id: '104857600000001', access_token: 'page-token-1' } };
  },
  bluesky: async () => {
    const standIn = await startBlueskyStandIn({ demoAccount: true });
    return { ...standIn, connect: { platform: 'bluesky', handle: 'demo.herald.test', app_password: 'demo-demo-demo-demo', service_url: standIn.origin } };
  },
  x: async () => {
    const standIn = await startXStandIn();
    standIn.addUser({ username: 'herald_demo', bearerToken: 'x-demo-token' });
    return { ...standIn, connect: { platform: 'x', access_token: 'x-demo-token' } };
  },
  instagram: async () => {
    const standIn = await startInstagramStandIn();
    return { ...standIn, connect: { platform: 'instagram', access_token: 'ig-token-1' } };
  },
  threads: async () => {
    const standIn = await startThreadsStandIn();
    return { ...standIn, connect: { platform: 'threads', access_token: 'threads-token-1' } };
  },
  mastodon: async () => {
    const standIn = await startMastodonStandIn();
    standIn.addAccount('herald_demo', { token: 'mastodon-demo-token' });
    return { ...standIn, connect: { platform: 'mastodon', instance_url: standIn.origin, access_token: 'mastodon-demo-token' } };
  },
  linkedin: async () => {
    const standIn = await startLinkedInStandIn();
    return { ...standIn, connect: { platform: 'linkedin', access_token: 'li-token-1' } };
  },
};
