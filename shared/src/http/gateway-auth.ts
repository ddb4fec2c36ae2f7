// Services answer only the gateway: every route but those marked public needs the
// internal credential, and the identity comes only from the gateway's headers.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { unauthorized } from '../errors.ts';
import { readIdentity, type Identity } from '../identity.ts';

declare module 'fastify' {
  interface FastifyRequest {
    identity: Identity;
  }
}

export function requireGateway(app: FastifyInstance, internalToken: string): void {
  app.decorateRequest('identity', null as unknown as Identity);
  app.addHook('onRequest', async (req: FastifyRequest) => {
    if (req.routeOptions.config?.public) return;
    const identity = readIdentity(req.headers, internalToken);
    if (!identity) throw unauthorized('Missing or invalid internal credential');
    req.identity = identity;
  });
}
