// The domain services of the platform, one line each: the name that is their folder
// (services/<name>/) and their settings' prefix (<NAME>_URL), the default port,
// the public path prefixes the gateway proxies to them with who may call them, and
// their share of the local store's connections under `npm start`; the module and
// export that build their app follow from the name. Everything else follows from
// this list: the gateway's proxy routes and scopes, the service URL settings,
// `npm start` and `--replicas`, `npm run openapi`, and the check that the deploy
// manifests name every service (test/service-registry.test.ts).

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

/**
 * An entry whose app is `build<Name>App` of services/<name>/src/app.ts, proxied at
 * /v1/<name> unless `prefixes` says otherwise.
 */
function service<const N extends string>(entry: {
  name: N;
  port: number;
  storeConnections: number;
  prefixes?: readonly ProxiedPrefix[];
}): ServiceEntry & { name: N } {
  const { name, port, storeConnections, prefixes = [{ prefix: `/v1/${name}` }] } = entry;
  const builder = `build${name.charAt(0).toUpperCase()}${name.slice(1)}App`;
  return { name, port, prefixes, storeConnections, app: { module: `services/${name}/src/app.ts`, builder } };
}

export const SERVICES = [
  service({ name: 'deals', port: 8081, storeConnections: 3 }),
  service({ name: 'clients', port: 8082, storeConnections: 10 }),
  service({ name: 'cases', port: 8083, storeConnections: 6 }),
  // POST /v1/deadlines/compute only computes: a read key may call it.
  service({
    name: 'activities',
    port: 8084,
    storeConnections: 3,
    prefixes: [{ prefix: '/v1/activities' }, { prefix: '/v1/deadlines', readOnly: true }],
  }),
  service({ name: 'financial', port: 8085, storeConnections: 3 }),
  service({
    name: 'webhooks',
    port: 8086,
    storeConnections: 11,
    prefixes: [{ prefix: '/v1/webhooks', adminOnly: true }],
  }),
  service({ name: 'publications', port: 8088, storeConnections: 3 }),
] as const;

export type ServiceName = (typeof SERVICES)[number]['name'];

/** Each public path prefix with the service it is proxied to, in the registry's order. */
export const PROXIED_PREFIXES: readonly (ProxiedPrefix & { upstream: ServiceName })[] = SERVICES.flatMap((s) =>
  s.prefixes.map((p) => ({ ...p, upstream: s.name })),
);
