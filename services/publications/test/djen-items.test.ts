import { expect, test } from '@jest/globals';
import { readDjenItem } from '../src/upstream/djen-items.ts';
import { plainText } from '../src/domain/publication-shape.ts';
import { cnjDigits, maskedCnj } from '../src/domain/cnj.ts';

const base = { id: 1, hash: 'abc', texto: '<p>x</p>' };

test('when the day comes as yyyy-mm-dd (with or without a time) or only as dd/mm/yyyy, then it is read, the first preferred; without one the item is skipped', () => {
  expect(
    readDjenItem({ ...base, data_disponibilizacao: '2026-11-26T00:00:00', datadisponibilizacao: '25/11/2026' })
      ?.made_available_date,
  ).toBe('2026-11-26');
  expect(readDjenItem({ ...base, datadisponibilizacao: '25/11/2026' })?.made_available_date).toBe('2026-11-25');
  expect(readDjenItem({ ...base })).toBeNull();
  expect(readDjenItem({ ...base, hash: '', data_disponibilizacao: '2026-11-26' })).toBeNull();
});

test('when lawyers and parties come in the API shape, then they are read with OAB digits and upper-case states; cancelled ones are inactive', () => {
  const item = readDjenItem({
    ...base,
    data_disponibilizacao: '2026-11-26',
    ativo: false,
    destinatarios: [{ nome: 'Maria', polo: 'P' }, { polo: 'A' }],
    destinatarioadvogados: [
      { advogado: { nome: 'Ana', numero_oab: '012.345', uf_oab: 'sp' } },
      { advogado: { nome: 'Sem OAB' } },
    ],
  })!;
  expect(item).toMatchObject({
    active: false,
    recipients: [{ name: 'Maria', side: 'P' }],
    lawyers: [{ name: 'Ana', oab_number: '12345', oab_uf: 'SP' }],
  });
});

test('when a text has markup and entities, then text_plain keeps its words and line breaks only', () => {
  expect(plainText('<p>Intime-se&nbsp;a parte.<br>Prazo: 15&nbsp;dias &amp; custas.</p><p>S&#227;o Paulo</p>')).toBe(
    'Intime-se a parte.\nPrazo: 15 dias & custas.\nSão Paulo',
  );
});

test('when a number is masked, unmasked or not a CNJ number, then its 20 digits and mask follow', () => {
  expect(cnjDigits('1234567-89.2024.8.13.0024')).toBe('12345678920248130024');
  expect(maskedCnj('12345678920248130024')).toBe('1234567-89.2024.8.13.0024');
  expect(cnjDigits('INT-2024/017')).toBeNull();
  expect(maskedCnj(' INT-2024/017 ')).toBe('INT-2024/017');
});
