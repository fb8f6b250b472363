import type { HttpClient } from '../../net/http';
import type { ContainerPolling } from './containers';

/** What every Graph adapter takes (adapters brief: origin from configuration, injected clock and sleep). */
export interface GraphAdapterDeps {
  http: HttpClient;
  origin?: string;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  /** Container status polling (Instagram, Threads); tests shorten it. */
  containerPolling?: ContainerPolling;
}

export const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
