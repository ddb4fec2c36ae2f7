// The court closures and the recess that every team's calendar starts with, beyond
// the holidays date-holidays knows (Brazil's national ones, 20 Nov from 2024, and
// each state's). Rules are date-holidays rule strings: `easter -48` is 48 days
// before Easter Sunday, as the library computes it; `MM-DD` a fixed day.

export interface ClosureRule {
  rule: string;
  name: string;
}

/** Closures of most courts (CPC art. 216: days without court business). */
export const COMMON_CLOSURES: readonly ClosureRule[] = [
  // Carnaval: no court business in the state, federal and labour courts (Lei 5.010/1966
  // art. 62 III for federal courts; each court's own act for the others, e.g. TJSP Prov. CSM).
  { rule: 'easter -48', name: 'Carnaval (segunda-feira)' },
  { rule: 'easter -47', name: 'Carnaval (terça-feira)' },
  // Sexta-feira Santa comes with date-holidays' national holidays.
  // Corpus Christi: closure in most courts (Res. CNJ 244/2016 lists it among the days
  // courts may close; TJSP, TRFs and TRTs close every year).
  { rule: 'easter 60', name: 'Corpus Christi' },
];

/** Feriados da Justiça Federal, Lei 5.010/1966 art. 62 (jurisdiction.branch "federal"). */
export const FEDERAL_CLOSURES: readonly ClosureRule[] = [
  // art. 62 I: "os dias compreendidos entre 20 de dezembro e 6 de janeiro, inclusive".
  ...[
    '12-20',
    '12-21',
    '12-22',
    '12-23',
    '12-24',
    '12-26',
    '12-27',
    '12-28',
    '12-29',
    '12-30',
    '12-31',
    '01-02',
    '01-03',
    '01-04',
    '01-05',
    '01-06',
  ].map((rule) => ({ rule, name: 'recesso da Justiça Federal (Lei 5.010/1966 art. 62 I)' })),
  // art. 62 II: "os dias da semana santa, compreendidos entre a quarta-feira e o domingo de Páscoa".
  { rule: 'easter -4', name: 'Quarta-feira Santa' },
  { rule: 'easter -3', name: 'Quinta-feira Santa' },
  { rule: 'easter -1', name: 'Sábado de Aleluia' },
  { rule: 'easter', name: 'Páscoa' },
  // art. 62 IV: "os dias 11 de agosto, 1º e 2 de novembro e 8 de dezembro" (2 Nov is national).
  { rule: '08-11', name: 'Dia do Advogado (Lei 5.010/1966 art. 62 IV)' },
  { rule: '11-01', name: 'Dia de Todos os Santos' },
  { rule: '12-08', name: 'Dia da Imaculada Conceição' },
];

/**
 * CPC art. 220 ("Suspende-se o curso do prazo processual nos dias compreendidos entre
 * 20 de dezembro e 20 de janeiro, inclusive"); CLT art. 775-A says the same for the
 * labour courts. It suspends business-day counting only.
 */
export const RECESS = { from: '12-20', to: '01-20', reason: 'recess (CPC art. 220)' } as const;
