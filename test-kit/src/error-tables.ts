// Tables of requests a service refuses, one test a row.
import type { Answer } from './api.ts';
import { expectInvalid } from './error-answers.ts';

/**
 * One test a row: `send` with the row's request (`what`, as the test's name calls it)
 * is 400 VALIDATION_ERROR with the row's message.
 */
export function testEachInvalid<T>(what: string, send: (request: T) => Promise<Answer>, rows: [T, string][]): void {
  test.each(rows)(`when ${what} is %j, then 400 %s`, async (request, message) => {
    expectInvalid(await send(request), message);
  });
}
