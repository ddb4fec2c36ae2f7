// The gateway's settings (operations.md, environment table), validated at start.
import { readConfig, str, url, platformSettings } from '@lpm/shared/config';
import { SERVICE_PORTS } from '@lpm/shared/service/runner';
import { UPSTREAM_NAMES, type UpstreamName, type Upstreams } from './http/proxy.ts';

const HTTP = ['http:', 'https:'];
const upstream = (name: keyof typeof SERVICE_PORTS) => url(`http://127.0.0.1:${SERVICE_PORTS[name]}`, HTTP);

/** The services this deployment runs: /health waits for these only. */
const serviceList = (raw: string | undefined): UpstreamName[] => {
  if (raw === undefined) return [...UPSTREAM_NAMES];
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(UPSTREAM_NAMES as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`unknown services: ${unknown.join(', ')} (known: ${UPSTREAM_NAMES.join(', ')})`);
  return names as UpstreamName[];
};

export function readGatewayConfig(env: NodeJS.ProcessEnv = process.env) {
  const c = readConfig(
    {
      ...platformSettings(8080),
      redisUrl: ['REDIS_URL', url('redis://127.0.0.1:6379', ['redis:', 'rediss:'])],
      redisKeyPrefix: ['REDIS_KEY_PREFIX', str('lpm:')],
      deals: ['DEALS_URL', upstream('deals')],
      clients: ['CLIENTS_URL', upstream('clients')],
      cases: ['CASES_URL', upstream('cases')],
      activities: ['ACTIVITIES_URL', upstream('activities')],
      financial: ['FINANCIAL_URL', upstream('financial')],
      webhooks: ['WEBHOOKS_URL', upstream('webhooks')],
      deployed: ['GATEWAY_SERVICES', serviceList],
    },
    env,
  );
  const { deals, clients, cases, activities, financial, webhooks, ...rest } = c;
  const upstreams: Upstreams = { deals, clients, cases, activities, financial, webhooks };
  return { ...rest, upstreams };
}

export type GatewayConfig = ReturnType<typeof readGatewayConfig>;
