// A team's record written by several requests at once: FerretDB applies each update
// as a read, a change in Go and a write of the whole document, so without the team's
// lock one write of two at once is lost even when they set different fields.
import { expect, test } from '@jest/globals';
import type { Store } from '@lpm/shared/store/orm';
import { gatewayRepositories } from '../src/data/store.ts';
import { storeForSuite } from './support.ts';

let store: Store;
storeForSuite('teams_repository', (opened) => (store = opened));

test('when each court calendar part, another setting and the plan are written at once, then every one is kept, team after team', async () => {
  const { teams } = gatewayRepositories(store.db);
  const jurisdiction = { uf: 'RJ', branch: 'federal' } as const;
  const closures = [{ date: '2025-01-25', name: 'Aniversário de São Paulo' }];
  const lost: unknown[] = [];
  for (let round = 0; round < 20; round++) {
    const id = `team_race_${round}`;
    await teams.insert({
      _id: id,
      name: `Team ${round}`,
      plan: 'starter',
      timezone: 'America/Sao_Paulo',
      owner_user_id: `user_${round}`,
      created_at: new Date(),
    });
    await Promise.all([
      teams.setSettings(id, { court_calendar: { jurisdiction } }, new Date()),
      teams.setSettings(id, { court_calendar: { closures } }, new Date()),
      teams.setSettings(id, { cnj_check: 'reject' }, new Date()),
      teams.setPlan(id, 'enterprise'),
    ]);
    const stored = await teams.get(id);
    const kept = { court_calendar: stored?.court_calendar, cnj_check: stored?.cnj_check, plan: stored?.plan };
    const all = { court_calendar: { jurisdiction, closures }, cnj_check: 'reject', plan: 'enterprise' };
    if (JSON.stringify(kept) !== JSON.stringify(all)) lost.push({ round, kept });
  }
  expect(lost).toEqual([]);
});
