import { expect, test } from '@jest/globals';
import { PrincipalChanges } from '../src/auth/principal-changes.ts';

const until = async (ok: () => boolean) => {
  while (!ok()) await new Promise((r) => setTimeout(r, 5));
};

test('when the counter is polled, then latest is the last answer and when its poll started; a failed poll leaves it as it was', async () => {
  let clock = 100;
  let answer: () => Promise<number> = async () => 3;
  let reads = 0;
  const changes = new PrincipalChanges({ read: () => (reads++, answer()), pollMs: 1, now: () => clock });
  changes.start();
  try {
    await until(() => changes.latest !== undefined);
    expect(changes.latest).toEqual({ version: 3, startedAt: 100 });
    answer = async () => {
      throw new Error('store down');
    };
    clock = 200;
    const failedFrom = reads;
    await until(() => reads > failedFrom + 1);
    expect(changes.latest).toEqual({ version: 3, startedAt: 100 });
    answer = async () => 4;
    await until(() => changes.latest?.version === 4);
    expect(changes.latest).toEqual({ version: 4, startedAt: 200 });
  } finally {
    changes.stop();
  }
  expect(changes.latest).toBeUndefined();
});
