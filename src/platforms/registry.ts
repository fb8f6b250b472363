import type { HttpClient } from '../net/http';
import { createBlueskyAdapter } from './bluesky';
import { createFacebookAdapter } from './facebook';
import { createInstagramAdapter } from './instagram';
import { createLinkedInAdapter } from './linkedin';
import { createMastodonAdapter } from './mastodon';
import { createTelegramAdapter } from './telegram';
import { createThreadsAdapter } from './threads';
import type { PlatformAdapter, PlatformSlug } from './types';
import { createXAdapter } from './x';

/**
 * Builds the eight adapters once per process from configuration: the one place that knows every platform folder.
 * Everything else asks `adapters[platform]`.
 */

export type PlatformAdapters = Readonly<Record<PlatformSlug, PlatformAdapter>>;

interface PlatformRegistryOptions {
  http: HttpClient;
  /** Origins from configuration (decisions.md "Running it"); Bluesky and Mastodon are per account. */
  platformUrls: { x: string; telegram: string; facebook: string; instagram: string; threads: string; linkedin: string };
  allowInsecureUrls: boolean;
  now?: () => Date;
  /** Tests shorten the platforms' processing waits with an injected sleep. */
  sleep?: (ms: number) => Promise<void>;
}

export function createPlatformAdapters(options: PlatformRegistryOptions): PlatformAdapters {
  const { http, platformUrls: urls, allowInsecureUrls: allowInsecure, now, sleep } = options;
  return {
    x: createXAdapter({ http, origin: urls.x, now, sleep }),
    bluesky: createBlueskyAdapter({ http, allowInsecure, now }),
    mastodon: createMastodonAdapter({ http, allowInsecure, now, sleep }),
    telegram: createTelegramAdapter({ http, origin: urls.telegram, now }),
    facebook: createFacebookAdapter({ http, origin: urls.facebook, now, sleep }),
    instagram: createInstagramAdapter({ http, origin: urls.instagram, facebookOrigin: urls.facebook, now, sleep }),
    threads: createThreadsAdapter({ http, origin: urls.threads, now, sleep }),
    linkedin: createLinkedInAdapter({ http, origin: urls.linkedin, now }),
  };
}
