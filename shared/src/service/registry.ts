// The domain services of the platform, one line each: the name that is their folder
// (services/<name>/) and their settings' prefix (<NAME>_URL), the default port,
// the public path prefixes the gateway proxies to them with who may call them,
// their share of the local store's connections under `npm start`, and the module
// and export that build their app. Everything else follows from this list: the
// gateway's proxy routes and scopes, the service URL settings, `npm start` and
// `--replicas`, `npm run openapi`, and the check that the deploy manifests name
// every service (test/service-registry.test.ts).

export interface ProxiedPrefix {
  prefix: string;
  /** Only an admin key may call it (otherwise GET needs read, the rest write). */
  adminOnly?: boolean;
  /** Every method only reads or computes: a read key may call it. */
  readOnly?: boolean;
}

export interface ServiceEntry {
  name: string;
  port: number;
  prefixes: readonly ProxiedPrefix[];
  /** Connections to the local document store `npm start` gives its process (scripts/local-store.ts). */
  storeConnections: number;
  /**
   * Its app builder, by path from the repository root and export name: loaded only by
   * `npm run openapi`, never by the gateway, which reaches the service over HTTP.
   */
  app: { module: string; builder: string };
}

export const SERVICES = [
  {
    name: 'deals',
    port: 8081,
    prefixes: [{ prefix: '/v1/deals' }],
    storeConnections: 3,
    app: { module: 'services/deals/src/app.ts', builder: 'buildDealsApp' },
  },
  {
    name: 'clients',
    port: 8082,
    prefixes: [{ prefix: '/v1/clients' }],
    storeConnections: 10,
    app: { module: 'services/clients/src/app.ts', builder: 'buildClientsApp' },
  },
  {
    name: 'cases',
    port: 8083,
    prefixes: [{ prefix: '/v1/cases' }],
    storeConnections: 6,
    app: { module: 'services/cases/src/app.ts', builder: 'buildCasesApp' },
  },
  // POST /v1/deadlines/compute only computes: a read key may call it.
  {
    name: 'activities',
    port: 8084,
    prefixes: [{ prefix: '/v1/activities' }, { prefix: '/v1/deadlines', readOnly: true }],
    storeConnections: 3,
    app: { module: 'services/activities/src/app.ts', builder: 'buildActivitiesApp' },
  },
  {
    name: 'financial',
    port: 8085,
    prefixes: [{ prefix: '/v1/financial' }],
    storeConnections: 3,
    app: { module: 'services/financial/src/app.ts', builder: 'buildFinancialApp' },
  },
  {
    name: 'webhooks',
    port: 8086,
    prefixes: [{ prefix: '/v1/webhooks', adminOnly: true }],
    storeConnections: 11,
    app: { module: 'services/webhooks/src/app.ts', builder: 'buildWebhooksApp' },
  },
  {
    name: 'publications',
    port: 8088,
    prefixes: [{ prefix: '/v1/publications' }],
    storeConnections: 3,
    app: { module: 'services/publications/src/app.ts', builder: 'buildPublicationsApp' },
  },
] as const satisfies readonly ServiceEntry[];

export type ServiceName = (typeof SERVICES)[number]['name'];

/** Each public path prefix with the service it is proxied to, in the registry's order. */
export const PROXIED_PREFIXES: readonly (ProxiedPrefix & { upstream: ServiceName })[] = SERVICES.flatMap((s) =>
  s.prefixes.map((p) => ({ ...p, upstream: s.name })),
);
