// The courts of the CNJ unified numbering (Resolução CNJ 65/2008, Anexo VIII): the
// segment J and the court code TR of NNNNNNN-DD.AAAA.J.TR.OOOO.
import { UFS_IN_CNJ_ORDER } from '@lpm/shared/court-calendar';

export const JUSTICE = {
  '1': 'STF',
  '2': 'CNJ',
  '3': 'STJ',
  '4': 'federal',
  '5': 'labour',
  '6': 'electoral',
  '7': 'military',
  '8': 'state',
  '9': 'state military',
} as const;
export type Justice = (typeof JUSTICE)[keyof typeof JUSTICE];

/** The states with a Tribunal de Justiça Militar (CF art. 125 §3); elsewhere the TJ is the military court's second instance. */
const STATE_MILITARY_COURTS: Record<string, string> = { MG: 'TJMMG', RS: 'TJMRS', SP: 'TJMSP' };

const numbered = (n: string, first: number, last: number) => {
  const i = Number(n);
  return i >= first && i <= last ? i : null;
};
const ufOf = (tr: string) => {
  const i = numbered(tr, 1, UFS_IN_CNJ_ORDER.length);
  return i ? UFS_IN_CNJ_ORDER[i - 1] : null;
};

/** The court a J.TR pair names, or null when the Resolution gives that pair none. */
export function courtOf(j: string, tr: string): string | null {
  switch (j) {
    case '1':
    case '2':
    case '3':
      return tr === '00' ? JUSTICE[j] : null;
    case '4': {
      if (tr === '90') return 'CJF';
      const n = numbered(tr, 1, 6); // TRF6 (Minas Gerais) since Lei 14.226/2021
      return n ? `TRF${n}` : null;
    }
    case '5': {
      if (tr === '00') return 'TST';
      if (tr === '90') return 'CSJT';
      const n = numbered(tr, 1, 24);
      return n ? `TRT${n}` : null;
    }
    case '6': {
      if (tr === '00') return 'TSE';
      const uf = ufOf(tr);
      return uf ? `TRE-${uf}` : null;
    }
    case '7': {
      if (tr === '00') return 'STM';
      const n = numbered(tr, 1, 12);
      return n ? `${n}ª CJM` : null;
    }
    case '8': {
      const uf = ufOf(tr);
      return uf === 'DF' ? 'TJDFT' : uf ? `TJ${uf}` : null;
    }
    case '9': {
      const uf = ufOf(tr);
      return uf ? (STATE_MILITARY_COURTS[uf] ?? (uf === 'DF' ? 'TJDFT' : `TJ${uf}`)) : null;
    }
    default:
      return null;
  }
}
