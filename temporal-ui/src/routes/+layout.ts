// Everything the UI's components read from the root page data (settings, cluster, system info) and the
// translations they render with, loaded once in the browser.
import i18next from 'i18next';
import { i18nNamespaces } from '@temporalio/ui/i18n/index';
import resources from '@temporalio/ui/i18n/locales/index';
import { fetchCluster, fetchSystemInfo } from '@temporalio/ui/services/cluster-service';
import { fetchNamespaces } from '@temporalio/ui/services/namespaces-service';
import { fetchSettings } from '@temporalio/ui/services/settings-service';
import '../app.css';

export const ssr = false;
export const prerender = false;

export async function load({ fetch }) {
  if (!i18next.isInitialized) {
    await i18next.init({ lng: 'en', fallbackLng: 'en', ns: i18nNamespaces, defaultNS: 'common', resources });
  }
  const settings = await fetchSettings(fetch);
  fetchNamespaces(settings, fetch);
  const [cluster, systemInfo] = await Promise.all([fetchCluster(settings, fetch), fetchSystemInfo(settings, fetch)]);
  return { settings, cluster, systemInfo };
}
