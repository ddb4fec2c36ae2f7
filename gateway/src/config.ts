// The gateway's settings (README, "Configuration"), validated at start.
import { ConfigError, duration, int, readConfig, redisSettings, platformSettings, str } from '@lpm/shared/config';
import { SERVICE_NAMES, serviceUrlSettings, type ServiceName } from '@lpm/shared/service/names';
import { trustedProxies } from './auth/client-address.ts';

/** Where each service answers (DEALS_URL ... WEBHOOKS_URL). */
export type Upstreams = Record<ServiceName, string>;

const isServiceName = (name: string): name is ServiceName => (SERVICE_NAMES as readonly string[]).includes(name);

/** The services this deployment runs: /health waits for these only. */
const serviceList = (raw: string | undefined): ServiceName[] => {
  if (raw === undefined) return [...SERVICE_NAMES];
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !isServiceName(n));
  if (unknown.length) throw new Error(`unknown services: ${unknown.join(', ')} (known: ${SERVICE_NAMES.join(', ')})`);
  return names.filter(isServiceName);
};

/** A duration in whole seconds, at least one (the limiter's windows are counted in seconds). */
const wholeSeconds =
  (fallback: string) =>
  (raw: string | undefined, name: string): number => {
    const ms = duration(fallback)(raw, name);
    if (ms < 1000 || ms % 1000 !== 0) throw new Error('must be whole seconds, at least 1s');
    return ms;
  };

const gatewaySettings = {
  ...platformSettings(8080),
  ...redisSettings,
  deployed: ['GATEWAY_SERVICES', serviceList],
  trustedProxies: ['TRUSTED_PROXIES', trustedProxies],
  authFailureLimit: ['AUTH_FAILURE_LIMIT', int(50, 1)],
  authFailureWindowMs: ['AUTH_FAILURE_WINDOW', wholeSeconds('1m')],
  // The routes served without a key (/health, /v1/openapi.*, /docs): requests per client address and window.
  publicRateLimit: ['PUBLIC_RATE_LIMIT', int(120, 1)],
  publicRateWindowMs: ['PUBLIC_RATE_WINDOW', wholeSeconds('1m')],
  // The listener of /internal/* (internal-listener.ts): the services' GATEWAY_URL, never published.
  internalPort: ['INTERNAL_PORT', int(8087, 1, 65535)],
  internalHost: ['INTERNAL_HOST', str('127.0.0.1')],
} as const;

export function readGatewayConfig(env: NodeJS.ProcessEnv = process.env) {
  // Checked together first, so one error names every bad setting, the services' URLs included.
  readConfig({ ...gatewaySettings, ...serviceUrlSettings() }, env);
  const config = readConfig(gatewaySettings, env);
  if (config.internalPort === config.port)
    throw new ConfigError([
      `INTERNAL_PORT: must differ from PORT (${config.port}): /internal/* never shares the public listener`,
    ]);
  return { ...config, upstreams: readConfig(serviceUrlSettings(), env) };
}

export type GatewayConfig = ReturnType<typeof readGatewayConfig>;
