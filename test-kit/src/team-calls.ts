// The calls of a suite that acts as one identity unless told otherwise, on a service
// in process, and the create of its main resource.
import type { LightMyRequestResponse } from 'fastify';
import type { Identity } from '@lpm/shared/identity';
import type { JsonAnswer } from './json.ts';
import type { ServiceUnderTest } from './service-under-test.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface TeamCalls {
  call: (method: Method, url: string, payload?: unknown, as?: Identity) => Promise<LightMyRequestResponse>;
  /** POSTs `body` to the resource; expects 201 and resolves with the answer's data. */
  create: (body: Record<string, unknown>, as?: Identity) => Promise<JsonAnswer>;
}

/** `sut` and `who` are read at each call: a suite sets them in beforeAll. */
export function teamCalls(sut: () => ServiceUnderTest, who: () => Identity, path: string): TeamCalls {
  const call: TeamCalls['call'] = (method, url, payload, as = who()) =>
    sut().call(as, { method, url, payload: payload as never });
  return {
    call,
    create: async (body, as) => {
      const res = await call('POST', path, body, as);
      expect(res.statusCode).toBe(201);
      return res.json().data;
    },
  };
}
