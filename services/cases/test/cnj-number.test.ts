// CNJ numbers (Resolução CNJ 65/2008): the check digits, the segments and the court
// table as unit tests; then a case's number through the cases app on a real store.
// Each valid number's DD is worked in its comment: DD = 98 - (NNNNNNN AAAA J TR OOOO 00 mod 97).
import type { Identity } from '@lpm/shared/identity';
import { expectDuplicate, expectRefused } from '@lpm/test-kit/error-answers';
import { courtOf } from '../src/domain/cnj-courts.ts';
import { normalizeCaseNumber, numberInfo } from '../src/domain/cnj-number.ts';
import { identity } from '@lpm/test-kit/teams';
import { startCases, type CasesUnderTest } from './helper.ts';

describe('CNJ check digits (ISO 7064 MOD 97-10)', () => {
  test('when the check digits are right, masked or not, then the number is valid and explained', () => {
    // 00012342023826010000 mod 97 = 90, DD = 98 - 90 = 08.
    const info = { format: 'cnj', valid: true, year: 2023, justice: 'state', court: 'TJSP', origin: '0100' };
    expect(numberInfo('0001234-08.2023.8.26.0100')).toEqual(info);
    expect(numberInfo(normalizeCaseNumber('00012340820238260100')!)).toEqual(info);
    expect(normalizeCaseNumber('  00012340820238260100 ')).toBe('0001234-08.2023.8.26.0100');
  });

  test('when a check digit is wrong or two digits are swapped, then valid is false', () => {
    expect(numberInfo('0001234-09.2023.8.26.0100').valid).toBe(false);
    expect(numberInfo('0001243-08.2023.8.26.0100').valid).toBe(false);
    expect(numberInfo('00012340920238260100').valid).toBe(false);
  });

  test('when the number is not in the CNJ format, then it is internal free text', () => {
    for (const n of ['INT-2024/017', '0001234-08.2023.8.26', '0001234-08-2023-8-26-0100', '123456789012345678901']) {
      expect(numberInfo(n)).toEqual({
        format: 'internal',
        valid: null,
        year: null,
        justice: null,
        court: null,
        origin: null,
      });
    }
    expect(normalizeCaseNumber(' INT-2024/017 ')).toBe('INT-2024/017');
  });

  test.each([
    // [number, justice, court]; DD worked from the remainder in the comment.
    ['0000001-95.2020.1.00.0000', 'STF', 'STF'], // 00000012020100000000 mod 97 = 3 -> 95
    ['0000002-62.2021.2.00.0000', 'CNJ', 'CNJ'], // ... mod 97 = 36 -> 62
    ['0000003-29.2022.3.00.0000', 'STJ', 'STJ'], // ... mod 97 = 69 -> 29
    ['5001234-03.2024.4.03.6100', 'federal', 'TRF3'], // 50012342024403610000 mod 97 = 95 -> 03
    ['1000123-59.2024.5.02.0001', 'labour', 'TRT2'], // 10001232024502000100 mod 97 = 39 -> 59
    ['0600001-61.2024.6.26.0001', 'electoral', 'TRE-SP'], // 06000012024626000100 mod 97 = 37 -> 61
    ['7000001-37.2023.7.01.0001', 'military', '1ª CJM'], // 70000012023701000100 mod 97 = 61 -> 37
    ['0001234-42.2023.8.07.0001', 'state', 'TJDFT'], // 00012342023807000100 mod 97 = 56 -> 42
    ['0000004-50.2023.9.26.0001', 'state military', 'TJMSP'], // 00000042023926000100 mod 97 = 48 -> 50
    ['0000005-20.2023.9.05.0001', 'state military', 'TJBA'], // 00000052023905000100 mod 97 = 78 -> 20 (no TJM in Bahia)
    ['0000001-85.2024.4.06.3800', 'federal', 'TRF6'], // 00000012024406380000 mod 97 = 13 -> 85
  ])('when %s is given, then it is valid, of %s justice, court %s', (n, justice, court) => {
    expect(numberInfo(n)).toMatchObject({ format: 'cnj', valid: true, justice, court });
  });

  test('when the segment or the court code does not exist, then valid is false', () => {
    // Segment 0 does not exist; TR 07 of J 4, 25 of J 5, 28 and 00 of J 8 name no court.
    expect(numberInfo('0000001-00.2024.0.00.0000')).toMatchObject({ valid: false, justice: null, court: null });
    expect(courtOf('4', '07')).toBeNull();
    expect(courtOf('5', '25')).toBeNull();
    expect(courtOf('8', '28')).toBeNull();
    expect(courtOf('8', '00')).toBeNull();
  });
});

describe('the court table (Resolução CNJ 65/2008, Anexo VIII)', () => {
  test('when J is 8, then TR 01 to 27 are the 27 state courts, in the Resolution order', () => {
    const expected = [
      'TJAC',
      'TJAL',
      'TJAP',
      'TJAM',
      'TJBA',
      'TJCE',
      'TJDFT',
      'TJES',
      'TJGO',
      'TJMA',
      'TJMT',
      'TJMS',
      'TJMG',
      'TJPA',
      'TJPB',
      'TJPR',
      'TJPE',
      'TJPI',
      'TJRJ',
      'TJRN',
      'TJRS',
      'TJRO',
      'TJRR',
      'TJSC',
      'TJSE',
      'TJSP',
      'TJTO',
    ];
    expect(expected.map((_, i) => courtOf('8', String(i + 1).padStart(2, '0')))).toEqual(expected);
  });

  test('when J is 4, then TR 01 to 06 are the six regional federal courts', () => {
    expect(['01', '02', '03', '04', '05', '06'].map((tr) => courtOf('4', tr))).toEqual([
      'TRF1',
      'TRF2',
      'TRF3',
      'TRF4',
      'TRF5',
      'TRF6',
    ]);
    expect(courtOf('4', '90')).toBe('CJF');
  });

  test('when J is 5, then TR 01 to 24 are the 24 regional labour courts, 00 the TST', () => {
    const trts = Array.from({ length: 24 }, (_, i) => courtOf('5', String(i + 1).padStart(2, '0')));
    expect(trts).toEqual([
      'TRT1',
      'TRT2',
      'TRT3',
      'TRT4',
      'TRT5',
      'TRT6',
      'TRT7',
      'TRT8',
      'TRT9',
      'TRT10',
      'TRT11',
      'TRT12',
      'TRT13',
      'TRT14',
      'TRT15',
      'TRT16',
      'TRT17',
      'TRT18',
      'TRT19',
      'TRT20',
      'TRT21',
      'TRT22',
      'TRT23',
      'TRT24',
    ]);
    expect(courtOf('5', '00')).toBe('TST');
    expect(courtOf('5', '90')).toBe('CSJT');
  });

  test('when J is 6, 7 or 9, then the electoral, military and state military courts are named', () => {
    expect([courtOf('6', '00'), courtOf('6', '01'), courtOf('6', '13')]).toEqual(['TSE', 'TRE-AC', 'TRE-MG']);
    expect([courtOf('7', '00'), courtOf('7', '12'), courtOf('7', '13')]).toEqual(['STM', '12ª CJM', null]);
    expect([courtOf('9', '13'), courtOf('9', '21'), courtOf('9', '26'), courtOf('9', '19')]).toEqual([
      'TJMMG',
      'TJMRS',
      'TJMSP',
      'TJRJ',
    ]);
  });
});

describe('a case number through the cases app', () => {
  let sut: CasesUnderTest;
  beforeAll(async () => {
    sut = await startCases();
  });
  afterAll(async () => {
    await sut?.close();
  });

  const create = (who: Identity, body: Record<string, unknown>) =>
    sut.call(who, { method: 'POST', url: '/v1/cases', payload: body });

  test('when a CNJ number is sent without the mask, then it is stored masked and the detail explains it', async () => {
    const who = identity();
    const res = await create(who, { title: 'Cobrança', number: '00012340820238260100' });
    expect(res.statusCode).toBe(201);
    expect(res.json().data.number).toBe('0001234-08.2023.8.26.0100');
    const detail = (await sut.call(who, { method: 'GET', url: `/v1/cases/${res.json().data.id}` })).json().data;
    expect(detail.number_info).toEqual({
      format: 'cnj',
      valid: true,
      year: 2023,
      justice: 'state',
      court: 'TJSP',
      origin: '0100',
    });
    // The same number masked is the same number: a duplicate.
    expectDuplicate(
      await create(who, { title: 'Outro', number: '0001234-08.2023.8.26.0100' }),
      'Duplicate case number',
    );
  });

  test('when the team warns (the default), then a wrong CNJ number is accepted with valid false; an internal one is free text', async () => {
    const who = identity();
    const bad = (await create(who, { title: 'A', number: '0001234-09.2023.8.26.0100' })).json().data;
    expect((await sut.call(who, { method: 'GET', url: `/v1/cases/${bad.id}` })).json().data.number_info).toMatchObject({
      format: 'cnj',
      valid: false,
    });
    const internal = (await create(who, { title: 'B', number: 'INT-2024/017' })).json().data;
    expect(
      (await sut.call(who, { method: 'GET', url: `/v1/cases/${internal.id}` })).json().data.number_info,
    ).toMatchObject({ format: 'internal' });
    const none = (await create(who, { title: 'C' })).json().data;
    expect((await sut.call(who, { method: 'GET', url: `/v1/cases/${none.id}` })).json().data.number_info).toBeNull();
  });

  test('when the team rejects, then a wrong CNJ number is 422 on create and update, and a right one passes', async () => {
    const who: Identity = { ...identity(), settings: { ...identity().settings, cnj_check: 'reject' } };
    expectRefused(await create(who, { title: 'A', number: '00012340920238260100' }), 'Invalid CNJ number');
    const ok = await create(who, { title: 'B', number: 'INT-1' });
    expect(ok.statusCode).toBe(201);
    const id = ok.json().data.id;
    expectRefused(
      await sut.call(who, { method: 'PUT', url: `/v1/cases/${id}`, payload: { number: '0001234-09.2023.8.26.0100' } }),
      'Invalid CNJ number',
    );
    const res = await sut.call(who, {
      method: 'PUT',
      url: `/v1/cases/${id}`,
      payload: { number: '5001234-03.2024.4.03.6100' },
    });
    expect(res.statusCode).toBe(200);
  });

  test('when searching by the 20 digits alone or part of them, then the case with the masked number is found', async () => {
    const who = identity();
    const kase = (await create(who, { title: 'Execução fiscal', number: '5001234-03.2024.4.03.6100' })).json().data;
    await create(who, { title: 'Outro', number: 'INT-9' });
    for (const search of ['50012340320244036100', '0320244036100', '5001234-03.2024']) {
      const res = await sut.call(who, { method: 'GET', url: `/v1/cases?search=${encodeURIComponent(search)}` });
      expect(res.json().data.map((c: { id: string }) => c.id)).toEqual([kase.id]);
    }
  });
});
