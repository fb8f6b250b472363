import type { Config } from '../../config';
import type { HttpClient } from '../../net/http';
import { createGraphRenewer } from '../graph/refresh';
import { createLinkedInRenewer } from '../linkedin/refresh';
import { createXRenewer } from '../x/refresh';
import type { CredentialRenewers } from './types';

/** The renewers of the platforms whose user tokens expire (facebook Page, mastodon and telegram tokens do not). */
export function createCredentialRenewers(deps: { http: HttpClient; platformUrls: Config['platformUrls']; apps: Config['credentialApps'] }): CredentialRenewers {
  return {
    x: createXRenewer({ http: deps.http, origin: deps.platformUrls.x, app: deps.apps.x }),
    linkedin: createLinkedInRenewer({ http: deps.http, app: deps.apps.linkedin }),
    threads: createGraphRenewer({ http: deps.http, platform: 'threads', apiUrl: deps.platformUrls.threads }),
    instagram: createGraphRenewer({ http: deps.http, platform: 'instagram', apiUrl: deps.platformUrls.instagram }),
  };
}
