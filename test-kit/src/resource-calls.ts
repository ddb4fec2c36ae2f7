// The calls a suite makes on one resource of a service in process, as the gateway
// would send them.
import type { LightMyRequestResponse } from 'fastify';
import type { Identity } from '@lpm/shared/identity';
import type { ServiceUnderTest } from './service-under-test.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface ResourceCalls {
  call: (who: Identity, method: Method, url: string, payload?: unknown) => Promise<LightMyRequestResponse>;
  /** POSTs `defaults` with `body` over them; expects 201 and resolves with the new id. */
  create: (who: Identity, body?: Record<string, unknown>) => Promise<string>;
  /** PUTs `body` on the record; expects 200. */
  put: (who: Identity, id: string, body: Record<string, unknown>) => Promise<void>;
}

/** `sut` is read at each call: a suite starts its service in beforeAll. */
export function resourceCalls(
  sut: () => ServiceUnderTest,
  path: string,
  defaults: Record<string, unknown>,
): ResourceCalls {
  const call = (who: Identity, method: Method, url: string, payload?: unknown) =>
    sut().call(who, { method, url, payload: payload as never });
  return {
    call,
    create: async (who, body = {}) => {
      const res = await call(who, 'POST', path, { ...defaults, ...body });
      expect(res.statusCode).toBe(201);
      return res.json().data.id as string;
    },
    put: async (who, id, body) => {
      expect((await call(who, 'PUT', `${path}/${id}`, body)).statusCode).toBe(200);
    },
  };
}
