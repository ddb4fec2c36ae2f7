// A deals app of a test's own (its cases service faked by the test), the calls the
// won with create_case tests make on it as the suite's team, and a cases service
// whose first case for a deal leaves the deal busy.
import type { Db } from 'mongodb';
import { expectBusy } from '@lpm/test-kit/error-answers';
import type { JsonAnswer } from '@lpm/test-kit/json';
import { holdRecordLock, releaseRecordLocks } from '@lpm/test-kit/record-locks';
import { newId } from '@lpm/shared/ids';
import type { DealsDeps } from '../src/domain/deals.ts';
import { who } from './deals-suite.ts';
import { startDeals, type DealsUnderTest } from './helper.ts';

/** A deal `title` created, as `who`, on a deals app of the test's own. */
export const createOn = async (own: DealsUnderTest, title: string) =>
  (await own.call(who, { method: 'POST', url: '/v1/deals', payload: { title } })).json().data;

/** PUT won with create_case, as `who`, on a deals app of the test's own. */
export const wonWithCase = (own: DealsUnderTest, dealId: string) =>
  own.call(who, { method: 'PUT', url: `/v1/deals/${dealId}/won`, payload: { create_case: true } });

/**
 * A cases service that makes each deal's case once and, as it makes it, has another
 * writer hold the deal on `db` past the won's lock wait: that won ends in 503 after
 * the case exists. It archives the case it made for a deal.
 */
export function casesHoldingTheDeal(db: () => Db) {
  const made = new Map<string, string>();
  /** The deals a case was asked for, in order. */
  const asked: string[] = [];
  const archived: string[] = [];
  const cases: DealsDeps['cases'] = {
    createForDeal: async (_caller, dealId, request) => {
      asked.push(dealId);
      const id = made.get(dealId) ?? newId('case');
      if (!made.has(dealId)) {
        made.set(dealId, id);
        await holdRecordLock(db(), 'deals', dealId);
      }
      return { id, title: request.title };
    },
    archiveForDeal: async (_caller, dealId) => {
      const id = made.get(dealId) ?? null;
      if (id) archived.push(id);
      return id;
    },
  };
  return { cases, made, asked, archived };
}

/**
 * A deal `title` created on `own` whose first won with create_case ended in 503, the
 * record busy (its cases service holds the lock, as casesHoldingTheDeal does); the lock is released.
 */
async function dealAfterBusyWon(own: DealsUnderTest, title: string) {
  const deal = await createOn(own, title);
  expectBusy(await wonWithCase(own, deal.id));
  await releaseRecordLocks(own.db);
  return deal;
}

/**
 * On a deals app of the test's own whose cases service is casesHoldingTheDeal's, a
 * deal `title` after its busy first won (dealAfterBusyWon) is handed to `check`;
 * the app is closed after.
 */
export async function afterBusyWon(
  title: string,
  check: (own: DealsUnderTest, deal: JsonAnswer, cases: ReturnType<typeof casesHoldingTheDeal>) => Promise<void>,
): Promise<void> {
  const cases = casesHoldingTheDeal(() => own.db);
  const own = await startDeals({ cases: cases.cases });
  try {
    await check(own, await dealAfterBusyWon(own, title), cases);
  } finally {
    await own.close();
  }
}
