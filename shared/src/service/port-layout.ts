// Where `npm start` puts each process, from the gateway's port P: the services next
// to it in the registry's order (P+1 .. P+N), the gateway's internal listener after
// them (P+N+1), and the further replicas of `--replicas` from P+N+2 on. The launcher,
// the tests and the bench all read it from here, so a new service moves nothing by hand.
import { SERVICES, type ServiceName } from './registry.ts';

/** The port of the first replica of service `name`. */
export function servicePort(gatewayPort: number, name: ServiceName): number {
  return gatewayPort + 1 + SERVICES.findIndex((s) => s.name === name);
}

/** The gateway's internal listener (/internal/*, for the services only). */
export function internalPort(gatewayPort: number): number {
  return gatewayPort + SERVICES.length + 1;
}

/** The first port of the further replicas. */
export function firstExtraPort(gatewayPort: number): number {
  return gatewayPort + SERVICES.length + 2;
}

/** How many ports a system takes: the gateway, one per service, the internal listener, and `extra` further replicas. */
export function portBlockSize(extra = 0): number {
  return SERVICES.length + 2 + extra;
}

/** Each service's URL on 127.0.0.1, for a system whose gateway listens on `gatewayPort`. */
export function serviceUrls(gatewayPort: number): Record<ServiceName, string> {
  return Object.fromEntries(
    SERVICES.map((s) => [s.name, `http://127.0.0.1:${servicePort(gatewayPort, s.name)}`]),
  ) as Record<ServiceName, string>;
}
