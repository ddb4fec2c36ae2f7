import * as s from '@lpm/shared/http/schemas';
import { jurisdictionSchema } from '@lpm/shared/court-calendar';

/** Exactly one of the three: the day the text was made available, published, or the day of the act. */
export interface DeadlineStart {
  made_available?: string;
  published?: string;
  from?: string;
}

export const COUNTINGS = ['business', 'calendar'] as const;

const START_MESSAGE = 'start must have exactly one of made_available, published or from';

const start = s.typed<DeadlineStart>({
  type: 'object',
  additionalProperties: false,
  properties: { made_available: s.date(), published: s.date(), from: s.date() },
  minProperties: 1,
  maxProperties: 1,
  'x-message': START_MESSAGE,
});

/** The calculator's input; also a deadline activity's `deadline_rule`. */
export const deadlineRule = s.object(
  {
    start,
    days: s.integer({ minimum: 1, maximum: 365, 'x-message': 'days must be an integer from 1 to 365' }),
    counting: s.enumOf(COUNTINGS, 'Invalid counting'),
    double: s.typed<boolean>({ ...s.boolean(), 'x-message': 'double must be true or false' }),
    jurisdiction: jurisdictionSchema(),
  },
  ['start', 'days'],
);

export const computeDeadlineBody = {
  ...s.named('ComputeDeadlineRequest', 'A deadline rule: the start, the days and how to count them.', deadlineRule),
  examples: [
    { start: { made_available: '2025-11-13' }, days: 5 },
    {
      start: { published: '2025-12-12' },
      days: 15,
      counting: 'business',
      double: true,
      jurisdiction: { uf: 'SP', branch: 'federal' },
    },
    { start: { from: '2025-06-02' }, days: 10, counting: 'calendar' },
  ],
} as typeof deadlineRule;

export type DeadlineRuleBody = s.Static<typeof deadlineRule>;

export const trailDay = s.shape({ date: s.out.string, counted: { type: 'boolean' }, reason: s.out.nullableString });

/** What a rule computes to: day 1, the due date, the publication date (made_available only), the days counted, the trail. */
export const deadlineShape: s.Schema = {
  ...s.shape({
    start_date: s.out.string,
    due_date: s.out.string,
    publication_date: s.out.nullableString,
    days: s.out.integer,
    trail: { type: 'array', items: trailDay },
  }),
  examples: [
    {
      start_date: '2025-11-17',
      due_date: '2025-11-24',
      publication_date: '2025-11-14',
      days: 5,
      trail: [
        { date: '2025-11-13', counted: false, reason: 'start day (CPC art. 224)' },
        { date: '2025-11-14', counted: false, reason: 'start day (CPC art. 224)' },
        { date: '2025-11-15', counted: false, reason: 'weekend' },
        { date: '2025-11-16', counted: false, reason: 'weekend' },
        { date: '2025-11-17', counted: true, reason: null },
        { date: '2025-11-18', counted: true, reason: null },
        { date: '2025-11-19', counted: true, reason: null },
        { date: '2025-11-20', counted: false, reason: 'holiday: Dia da Consciência Negra' },
        { date: '2025-11-21', counted: true, reason: null },
        { date: '2025-11-22', counted: false, reason: 'weekend' },
        { date: '2025-11-23', counted: false, reason: 'weekend' },
        { date: '2025-11-24', counted: true, reason: null },
      ],
    },
  ],
};

export const computeResponse = s.okResponse(200, deadlineShape);
