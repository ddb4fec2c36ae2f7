// The domain services of the platform, their default ports and the settings that
// say where each answers: one list for the runner, the gateway and the launcher.
import { url } from '../config.ts';

export const SERVICE_PORTS = { deals: 8081, clients: 8082, cases: 8083, activities: 8084, financial: 8085, webhooks: 8086 } as const;
export type ServiceName = keyof typeof SERVICE_PORTS;
export const SERVICE_NAMES = Object.keys(SERVICE_PORTS) as ServiceName[];

export const HTTP = ['http:', 'https:'];

/** Where each service answers (DEALS_URL ... WEBHOOKS_URL), for the gateway and for services that ask each other. */
export function serviceUrlSettings() {
  return Object.fromEntries(
    SERVICE_NAMES.map((name) => [name, [`${name.toUpperCase()}_URL`, url(`http://127.0.0.1:${SERVICE_PORTS[name]}`, HTTP)]]),
  ) as { [K in ServiceName]: [string, (raw: string | undefined) => string] };
}
