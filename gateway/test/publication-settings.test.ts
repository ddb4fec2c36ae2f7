// The team's DJEN watches and deadline mode in GET/PUT /v1/settings, and the list of
// watching teams the publications service reads on the internal listener.
import { expect, test } from '@jest/globals';
import { expectError } from '@lpm/test-kit/api';
import { call, gatewayForSuite, internalHeaders, newTeam, type TestGateway } from './support.ts';

let gw: TestGateway;

gatewayForSuite('publication_settings', (started) => void (gw = started.gw), { echo: 'services' });

const put = (key: string, body: unknown) =>
  call(gw.url, '/v1/settings', { method: 'PUT', key, body: JSON.stringify(body) });
const WATCHES = [
  { oab_number: '0123456', oab_uf: 'SP', name: ' Ana Costa ' },
  { oab_number: '987', oab_uf: 'MG' },
];

test('when a team never set them, then GET shows no watches, mode suggest, 15 business days and 7 days of backfill', async () => {
  const team = await newTeam(gw.accounts);
  const res = await call(gw.url, '/v1/settings', { key: team.apiKey });
  expect(res.body.data.publications).toEqual({
    watches: [],
    deadline: { mode: 'suggest', days: 15, counting: 'business' },
    backfill_days: 7,
  });
});

test('when each part is sent alone, then the others keep their values and GET shows them', async () => {
  const team = await newTeam(gw.accounts);
  expect((await put(team.apiKey, { publications: { watches: WATCHES } })).status).toBe(200);
  expect((await put(team.apiKey, { publications: { deadline: { mode: 'create' } } })).status).toBe(200);
  const res = await put(team.apiKey, { publications: { backfill_days: 30, deadline: { days: 5 } } });
  expect(res.status).toBe(200);
  const expected = {
    watches: [
      { oab_number: '123456', oab_uf: 'SP', name: 'Ana Costa' },
      { oab_number: '987', oab_uf: 'MG', name: null },
    ],
    deadline: { mode: 'create', days: 5, counting: 'business' },
    backfill_days: 30,
  };
  expect(res.body.data.publications).toEqual(expected);
  expect((await call(gw.url, '/v1/settings', { key: team.apiKey })).body.data.publications).toEqual(expected);
  const listed = await call(gw.internalUrl, '/internal/publication-watches', { headers: internalHeaders('-') });
  const mine = (listed.body.data as { team_id: string; user_id: string; publications: unknown }[]).find(
    (t) => t.team_id === team.team.id,
  );
  expect(mine).toMatchObject({ user_id: team.user.id, publications: expected });
});

test('when a watch is invalid, duplicated or one too many, or a part is out of range, then 400 names it', async () => {
  const team = await newTeam(gw.accounts);
  expectError(
    await put(team.apiKey, { publications: { watches: [{ oab_number: '12a', oab_uf: 'SP' }] } }),
    400,
    'VALIDATION_ERROR',
    'oab_number must be 1 to 7 digits',
  );
  expectError(
    await put(team.apiKey, { publications: { watches: [{ oab_number: '12', oab_uf: 'XX' }] } }),
    400,
    'VALIDATION_ERROR',
    'Invalid oab_uf',
  );
  expectError(
    await put(team.apiKey, {
      publications: {
        watches: [
          { oab_number: '12', oab_uf: 'SP' },
          { oab_number: '012', oab_uf: 'SP' },
        ],
      },
    }),
    400,
    'VALIDATION_ERROR',
    'Duplicate watch: the same OAB number and state twice',
  );
  const many = Array.from({ length: 51 }, (_, i) => ({ oab_number: String(i + 1), oab_uf: 'SP' }));
  expectError(
    await put(team.apiKey, { publications: { watches: many } }),
    400,
    'VALIDATION_ERROR',
    'publications.watches must be a list of at most 50 watches',
  );
  expectError(
    await put(team.apiKey, { publications: { backfill_days: 61 } }),
    400,
    'VALIDATION_ERROR',
    'publications.backfill_days must be an integer from 0 to 60',
  );
  expectError(
    await put(team.apiKey, { publications: { deadline: { days: 0 } } }),
    400,
    'VALIDATION_ERROR',
    'publications.deadline.days must be an integer from 1 to 365',
  );
  expectError(
    await put(team.apiKey, { publications: {} }),
    400,
    'VALIDATION_ERROR',
    'publications must be an object with watches, deadline, backfill_days or several',
  );
});
