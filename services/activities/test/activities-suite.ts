// The activities app in process for the files that call its endpoints as two teams
// (activities-api, activities-lists, activities-recurrence), and their calls.
import type { Identity } from '@lpm/shared/identity';
import { teamCalls } from '@lpm/test-kit/team-calls';
import { identity } from '@lpm/test-kit/teams';
import { startActivities, type ActivitiesUnderTest } from './helper.ts';

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const ZONE = 'America/Sao_Paulo';
export const DAY = 86_400_000;

export let sut: ActivitiesUnderTest;
export let t: Identity;
export let other: Identity;

export const { call, create } = teamCalls(
  () => sut,
  () => t,
  '/v1/activities',
);

/** Starts the activities app and its two teams before the file's tests, and closes it after. */
export function activitiesSuite(): void {
  beforeAll(async () => {
    sut = await startActivities();
    t = identity(ZONE);
    other = identity(ZONE);
  });
  afterAll(async () => {
    await sut?.close();
  });
}
