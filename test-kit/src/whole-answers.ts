// Each answer a service's test gets on a documented route, checked against the
// OpenAPI document (contract.ts) before the serializer writes it: the serializer
// drops a field its response schema lacks without a word, and leaves out one the
// schema lists but the answer lacks, so only the answer as the code built it shows
// either. The service test helpers install this on their app; closing the helper
// fails with what was found.
import type { FastifyInstance } from 'fastify';
import { contract, type Contract } from './contract.ts';

/** Checks every 2xx answer of `app` on a route of the document; the problems found so far (no route or status of the document is not one). */
export function checkWholeAnswers(app: FastifyInstance, document: Contract = contract()): string[] {
  const problems: string[] = [];
  app.addHook('preSerialization', (req, reply, payload, done) => {
    if (reply.statusCode < 300 && document.operation(req.method, req.url)) {
      const problem = document.check(req.method, req.url, reply.statusCode, JSON.parse(JSON.stringify(payload)));
      if (problem) problems.push(problem);
    }
    done(null, payload);
  });
  return problems;
}

/** Throws when any answer was not whole. */
export function assertWholeAnswers(problems: string[]): void {
  if (problems.length)
    throw new Error(`answers that differ from their response schema:\n${[...new Set(problems)].join('\n')}`);
}
