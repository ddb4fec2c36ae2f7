// Hostile query strings over every list route, and calendar days
// outside 1900-01-01..9998-12-31 on every route that takes one, through the
// gateway of the running system. No answer is a 5xx; each is the envelope. Then
// amounts past the money cap, and user text that names a prototype key.
import { startRunningSystem, type RunningSystem } from '@lpm/test-kit/running-system';

let sys: RunningSystem;
let key: string;

beforeAll(async () => {
  sys = await startRunningSystem('hostile');
  key = sys.team('Hostil').api_key;
}, 120_000);

afterAll(async () => {
  await sys?.stop();
});

/** Every route that answers a list (or a summary) from query parameters, with the parameters it reads besides page and limit. */
const LIST_ROUTES: Record<string, string[]> = {
  '/v1/deals': ['from', 'to', 'min_value', 'max_value', 'sort', 'status'],
  '/v1/deals/summary': ['currency'],
  '/v1/clients': ['search', 'sort', 'type', 'status'],
  '/v1/clients/cli_00000000000000000000000000/cases': ['sort'],
  '/v1/cases': ['from', 'to', 'search', 'sort', 'priority'],
  '/v1/cases/case_00000000000000000000000000/activities': ['sort'],
  '/v1/cases/case_00000000000000000000000000/timeline': [],
  '/v1/activities': ['from', 'to', 'overdue', 'sort', 'status'],
  '/v1/activities/overdue': ['sort'],
  '/v1/financial': ['from', 'to', 'category', 'sort', 'type'],
  '/v1/financial/overdue': ['sort'],
  '/v1/financial/summary': ['from', 'to', 'group_by', 'currency'],
  '/v1/webhooks': [],
  '/v1/webhooks/wh_00000000000000000000000000/deliveries': ['sort'],
};

/** Values that once gave a 5xx (1e309, Infinity, year 0000) and their neighbours. */
const HOSTILE = [
  '1e309',
  '-1e309',
  'Infinity',
  '-Infinity',
  'NaN',
  '1e300',
  '9007199254740993',
  '1.5',
  '0',
  '-1',
  '-0',
  '0x10',
  '',
  '0000-01-01',
  '0050-01-01',
  '1899-12-31',
  '9999-12-31',
  '10000-01-01',
  '+002025-01-01',
  '2025-02-30',
  '__proto__',
  'constructor',
  '%00',
  '%EF%BF%BF',
  '[]',
  '{"$gt":""}',
  'a'.repeat(2000),
];

async function get(path: string, as = key) {
  const res = await sys.request(path, { key: as });
  return {
    status: res.status,
    body: (await res.json()) as { success: boolean; error?: { code: string; message: string } },
  };
}

describe('hostile query strings on every list route', () => {
  test('when each route gets each hostile value in each of its parameters (page and limit twice over too), then no answer is a 5xx and each is in the envelope', async () => {
    const failures: string[] = [];
    let sent = 0;
    for (const [route, params] of Object.entries(LIST_ROUTES)) {
      const own = sys.team(`Hostil ${route}`).api_key; // each route under its own minute limit
      for (const param of ['page', 'limit', ...params]) {
        for (const value of HOSTILE) {
          const twice = param === 'page' || param === 'limit' ? [`${param}=${value}&${param}=${value}`] : [];
          for (const query of [`${param}=${value}`, ...twice]) {
            const { status, body } = await get(`${route}?${query}`, own);
            sent++;
            const inEnvelope =
              status < 400 ? body.success === true : body.success === false && typeof body.error?.code === 'string';
            if (status >= 500 || !inEnvelope)
              failures.push(`${route}?${query.slice(0, 80)} -> ${status} ${JSON.stringify(body).slice(0, 200)}`);
          }
        }
      }
    }
    expect(sent).toBeGreaterThan(2000);
    expect(failures).toEqual([]);
  }, 600_000);

  test.each([
    ['/v1/clients?limit=1e309', 'limit must be an integer from 1 to 100'],
    ['/v1/deals?limit=Infinity', 'limit must be an integer from 1 to 100'],
    ['/v1/activities?limit=-Infinity', 'limit must be an integer from 1 to 100'],
    ['/v1/financial?limit=1.5', 'limit must be an integer from 1 to 100'],
    ['/v1/cases?limit=0', 'limit must be an integer from 1 to 100'],
    ['/v1/clients?limit=-1', 'limit must be an integer from 1 to 100'],
    ['/v1/cases/case_00000000000000000000000000/timeline?limit=1e309', 'limit must be an integer from 1 to 100'],
    ['/v1/deals?page=1e300', 'page must be an integer from 1 to 10000'],
    ['/v1/clients?page=10001', 'page must be an integer from 1 to 10000'],
    ['/v1/deals?min_value=1e309', 'min_value must be a number >= 0'],
    ['/v1/cases?to=0000-01-01', 'to must be a date from 1900-01-01 to 9998-12-31'],
    ['/v1/deals?from=1899-12-31', 'from must be a date from 1900-01-01 to 9998-12-31'],
    ['/v1/activities?to=9999-12-31', 'to must be a date from 1900-01-01 to 9998-12-31'],
    ['/v1/financial/summary?from=0050-01-01', 'from must be a date from 1900-01-01 to 9998-12-31'],
  ])('when GET %s, then 400 %s', async (path, message) => {
    const { status, body } = await get(path);
    expect({ status, body }).toEqual({
      status: 400,
      body: {
        success: false,
        error: { code: 'VALIDATION_ERROR', message, details: expect.objectContaining({ type: 'invalid' }) },
      },
    });
  });

  test('when a list is asked for the last page there is, or the last day there is, then it answers 200', async () => {
    expect((await get('/v1/clients?page=10000&limit=100')).status).toBe(200);
    expect((await get('/v1/cases?from=1900-01-01&to=9998-12-31')).status).toBe(200);
    expect((await get('/v1/financial/summary?from=1900-01-01&to=1900-01-31')).status).toBe(200);
    expect((await get('/v1/financial/summary?from=9998-12-01&to=9998-12-31&group_by=day')).status).toBe(200);
  });
});

describe('calendar days outside 1900-01-01..9998-12-31 in bodies', () => {
  const OUTSIDE = ['0050-01-01', '0000-01-01', '1899-12-31', '9999-12-31'];
  const cases: [string, string, string, (d: string) => unknown][] = [
    ['POST', '/v1/activities', 'due_date', (d) => ({ type: 'task', title: 'A', due_date: d })],
    [
      'POST',
      '/v1/activities',
      'recurrence.until',
      (d) => ({ type: 'task', title: 'A', due_date: '2026-01-01', recurrence: { frequency: 'daily', until: d } }),
    ],
    ['POST', '/v1/deadlines/compute', 'start.made_available', (d) => ({ start: { made_available: d }, days: 15 })],
    ['POST', '/v1/deals', 'expected_close_date', (d) => ({ title: 'D', expected_close_date: d })],
    ['POST', '/v1/clients', 'birth_date', (d) => ({ type: 'PF', name: 'C', birth_date: d })],
    ['POST', '/v1/cases', 'sla_date', (d) => ({ title: 'K', sla_date: d })],
    [
      'POST',
      '/v1/financial',
      'date',
      (d) => ({ type: 'revenue', category: 'x', description: 'y', amount: 1, date: d }),
    ],
    [
      'POST',
      '/v1/financial',
      'paid_date',
      (d) => ({ type: 'revenue', category: 'x', description: 'y', amount: 1, date: '2026-01-01', paid_date: d }),
    ],
    [
      'PUT',
      '/v1/settings',
      'court_calendar.closures.0.date',
      (d) => ({ court_calendar: { jurisdiction: { uf: 'SP', branch: 'state' }, closures: [{ date: d, name: 'N' }] } }),
    ],
  ];

  test.each(cases)(
    'when %s %s sends %s outside the range, then 400 naming the range (never a 500)',
    async (method, path, field, body) => {
      for (const day of OUTSIDE) {
        const res = await sys.call(key, method, path, body(day));
        expect({ day, status: res.status, body: res.body }).toEqual({
          day,
          status: 400,
          body: {
            success: false,
            error: {
              code: 'VALIDATION_ERROR',
              message: `${field} must be a date from 1900-01-01 to 9998-12-31`,
              details: { field, type: 'invalid', expected: '1900-01-01..9998-12-31' },
            },
          },
        });
      }
    },
  );

  test('when the first and the last day of the range are sent, then they are taken', async () => {
    for (const day of ['1900-01-01', '9998-12-31']) {
      const res = await sys.call(key, 'POST', '/v1/activities', { type: 'task', title: 'Limite', due_date: day });
      expect(res.status).toBe(201);
      expect(res.body.data.due_date).toBe(day);
    }
  });
});

describe('money', () => {
  test('when a deal value, a won final_value or a financial amount is past the cap of 1,000,000,000, then 400', async () => {
    const over = 1_000_000_000.01;
    const res = await sys.call(key, 'POST', '/v1/deals', { title: 'Grande', value: over });
    expect(res.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'value must be a number from 0 to 1000000000',
      details: { field: 'value' },
    });
    const deal = (await sys.call(key, 'POST', '/v1/deals', { title: 'Grande' })).body.data;
    const won = await sys.call(key, 'PUT', `/v1/deals/${deal.id}/won`, { final_value: 1e13 });
    expect(won.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'final_value must be a number from 0 to 1000000000',
    });
    const rec = await sys.call(key, 'POST', '/v1/financial', {
      type: 'revenue',
      category: 'x',
      description: 'y',
      amount: 1e13,
      date: '2026-01-15',
    });
    expect(rec.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'Invalid amount',
      details: { field: 'amount' },
    });
  });

  test('when 10 deals are at the cap less a cent, then the summary adds them to the cent', async () => {
    const team = sys.team('Teto').api_key;
    for (let i = 0; i < 10; i++)
      expect((await sys.call(team, 'POST', '/v1/deals', { title: `Teto ${i}`, value: 999_999_999.99 })).status).toBe(
        201,
      );
    const summary = (await sys.call(team, 'GET', '/v1/deals/summary')).body.data;
    expect(summary.total_value).toBe(9_999_999_999.9);
  });
});

describe('user text that names a prototype key', () => {
  test('when a paid financial record has the category __proto__ (or constructor), then by_category shows it with its amount', async () => {
    const team = sys.team('Proto').api_key;
    for (const [category, amount] of [
      ['__proto__', 10],
      ['constructor', 2.5],
      ['honorários', 1],
    ] as const) {
      const res = await sys.call(team, 'POST', '/v1/financial', {
        type: 'revenue',
        category,
        description: 'd',
        amount,
        date: '2026-01-15',
        status: 'paid',
        paid_date: '2026-01-15',
      });
      expect(res.status).toBe(201);
    }
    const res = await sys.request('/v1/financial/summary?from=2026-01-01&to=2026-01-31', { key: team });
    const byCategory = JSON.parse(await res.text()).data.by_category as object;
    expect(Object.keys(byCategory).sort()).toEqual(['__proto__', 'constructor', 'honorários']);
    expect(Object.getOwnPropertyDescriptor(byCategory, '__proto__')?.value).toBe(10);
    expect(Object.getOwnPropertyDescriptor(byCategory, 'constructor')?.value).toBe(2.5);
  });
});
