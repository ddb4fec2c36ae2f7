// The domain services' names, default ports and the settings that say where each
// answers, from the registry (registry.ts): for the runner, the gateway and the launcher.
import { url } from '../config.ts';
import { SERVICES, type ServiceName } from './registry.ts';

export type { ServiceName };
export const SERVICE_NAMES: readonly ServiceName[] = SERVICES.map((s) => s.name);
export const SERVICE_PORTS = Object.fromEntries(SERVICES.map((s) => [s.name, s.port])) as Record<ServiceName, number>;

export const HTTP = ['http:', 'https:'];

/** The URLs of a service's replicas in its setting (one URL, or several comma-separated). */
export const replicaUrls = (setting: string): string[] =>
  setting
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);

/** A service URL setting: one URL, or its replicas' URLs comma-separated (each checked); the value as given. */
const urlList = (fallback: string) => (raw: string | undefined, name: string) => {
  for (const u of replicaUrls(raw ?? fallback)) url(undefined, HTTP)(u, name);
  if (!replicaUrls(raw ?? fallback).length) throw new Error('is required');
  return raw ?? fallback;
};

/**
 * Where each service answers (DEALS_URL ... WEBHOOKS_URL), for the gateway and for
 * services that ask each other: one URL (a Kubernetes Service), or the URLs of its
 * replicas, comma-separated (`npm start --replicas`), which callers balance over.
 */
export function serviceUrlSettings() {
  return Object.fromEntries(
    SERVICE_NAMES.map((name) => [
      name,
      [`${name.toUpperCase()}_URL`, urlList(`http://127.0.0.1:${SERVICE_PORTS[name]}`)],
    ]),
  ) as {
    [K in ServiceName]: [string, (raw: string | undefined, name: string) => string];
  };
}
