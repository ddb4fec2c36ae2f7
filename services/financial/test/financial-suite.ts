// The financial app in process for the files that call its endpoints as a new team
// each test (financial-api.test.ts, financial-lists.test.ts), and their calls.
import type { Identity } from '@lpm/shared/identity';
import { dayIn } from '@lpm/shared/time';
import { identity } from '@lpm/test-kit/teams';
import { startFinancial, type FinancialUnderTest } from './helper.ts';

export const ZONE = 'America/Sao_Paulo';
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const today = () => dayIn(ZONE, new Date());

export let sut: FinancialUnderTest;
export let who: Identity;

export const base = {
  type: 'revenue',
  category: 'honorarios',
  description: 'Honorários iniciais',
  amount: 1500.5,
  date: '2026-03-10',
};
export const post = (payload: unknown, as = who) =>
  sut.call(as, { method: 'POST', url: '/v1/financial', payload: payload as object });
export const put = (id: string, payload: unknown, as = who) =>
  sut.call(as, { method: 'PUT', url: `/v1/financial/${id}`, payload: payload as object });
export const get = (url: string, as = who) => sut.call(as, { method: 'GET', url });
export const del = (id: string, as = who) => sut.call(as, { method: 'DELETE', url: `/v1/financial/${id}` });
export const create = async (payload: object = {}, as = who) => {
  const res = await post({ ...base, ...payload }, as);
  expect(res.statusCode).toBe(201);
  return res.json().data;
};
export const storedOutbox = async (id: string) =>
  (
    await sut.db
      .collection<{ _id: string; outbox?: { type: string; data: unknown; previous_attributes?: unknown }[] }>(
        'financial_records',
      )
      .findOne({ _id: id })
  )?.outbox ?? [];

/** Starts the financial app before the file's tests, a new team before each, and closes the app after. */
export function financialSuite(): void {
  beforeAll(async () => {
    sut = await startFinancial();
  });
  beforeEach(() => {
    who = identity(ZONE);
  });
  afterAll(async () => {
    await sut.close();
  });
}
