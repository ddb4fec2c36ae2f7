// The request and response schemas of GET and PUT /v1/settings (docs/decisions.md §8).
import * as s from '@lpm/shared/http/schemas';
import { CNJ_CHECKS, UFS, closuresSchema, jurisdictionSchema } from '@lpm/shared/court-calendar';
import { DEADLINE_COUNTINGS, DEADLINE_MODES, MAX_BACKFILL_DAYS, MAX_WATCHES } from '@lpm/shared/publication-settings';

const MAX_PHASES = 30;
/** Closures travel in the settings header (MAX_SETTINGS_BYTES); a year of municipal holidays and outages fits. */
const MAX_CLOSURES = 100;

const JURISDICTION_ABOUT =
  "The team's court: `uf` adds that state's holidays (null: the national calendar only) and `branch` that branch's closures (default state). Sent whole: a part left out takes its default.";
const CLOSURES_ABOUT =
  "Days the team's court had no business (municipal holidays, closures, its system down), in date order, one a day. Sent whole: the list replaces the team's.";

const courtCalendar = {
  ...s.object({
    jurisdiction: { ...jurisdictionSchema(), description: JURISDICTION_ABOUT },
    closures: { ...closuresSchema(MAX_CLOSURES), description: CLOSURES_ABOUT },
  }),
  minProperties: 1,
  description:
    'Either part, or both: the part not sent keeps its value. A team that never set a jurisdiction counts the national calendar only.',
  'x-message': 'court_calendar must be an object with jurisdiction, closures or both',
};

const watch = s.object(
  {
    oab_number: s.typed<string>({
      type: 'string',
      pattern: '^[0-9]{1,7}$',
      'x-message': 'oab_number must be 1 to 7 digits',
    }),
    oab_uf: s.enumOf(UFS, 'Invalid oab_uf'),
    name: s.nullable(s.text(200)),
  },
  ['oab_number', 'oab_uf'],
);

const publications = {
  ...s.object({
    watches: {
      ...s.arrayOf(watch, {
        maxItems: MAX_WATCHES,
        'x-message': `publications.watches must be a list of at most ${MAX_WATCHES} watches`,
      }),
      description:
        "The lawyers whose publications the DJEN is polled for, by OAB number and state. Sent whole: the list replaces the team's. A new watch reads back `backfill_days` days.",
    },
    deadline: {
      ...s.object({
        mode: s.enumOf(DEADLINE_MODES, 'Invalid publications.deadline.mode'),
        days: s.integer({
          minimum: 1,
          maximum: 365,
          'x-message': 'publications.deadline.days must be an integer from 1 to 365',
        }),
        counting: s.enumOf(DEADLINE_COUNTINGS, 'Invalid publications.deadline.counting'),
      }),
      description:
        "What a publication's deadline becomes: `off` none, `suggest` computed on the publication, `create` a deadline activity on its matched case. Fields left out keep their values.",
    },
    backfill_days: s.integer({
      minimum: 0,
      maximum: MAX_BACKFILL_DAYS,
      'x-message': `publications.backfill_days must be an integer from 0 to ${MAX_BACKFILL_DAYS}`,
    }),
  }),
  minProperties: 1,
  description: 'Any part, alone or with the others: the parts not sent keep their values.',
  'x-message': 'publications must be an object with watches, deadline, backfill_days or several',
};

const phaseName = s.typed<string>({ type: 'string', minLength: 1, maxLength: 100 });
const phaseList = <T>(field: string, items: s.Schema<T>) =>
  s.typed<T[]>({
    type: 'array',
    minItems: 1,
    maxItems: MAX_PHASES,
    items,
    'x-message': `${field} must be a list of 1 to ${MAX_PHASES} phases`,
  });

/** Origins that may frame the webhooks portal, at most; each a scheme and host (and port), no path. */
export const MAX_PORTAL_ORIGINS = 20;
const origin = s.text(300, { pattern: '^https?://[^/?#\\s*;,\'"]+$', 'x-message': 'Invalid origin' });
const portal = {
  ...s.object(
    {
      allowed_origins: s.arrayOf(origin, {
        maxItems: MAX_PORTAL_ORIGINS,
        'x-message': `allowed_origins must be a list of at most ${MAX_PORTAL_ORIGINS} origins`,
      }),
    },
    ['allowed_origins'],
  ),
  description:
    "The webhooks portal (`/portal`): the origins whose pages may show it in a frame (its Content-Security-Policy's frame-ancestors); none by default. Sent whole: the list replaces the team's.",
};

export const updateSettingsBody = s.named(
  'UpdateSettingsRequest',
  'Any subset of the settings.',
  s.object({
    court_calendar: courtCalendar,
    cnj_check: s.enumOf(CNJ_CHECKS, 'Invalid cnj_check'),
    publications,
    timezone: s.text(100, {
      'x-message': 'Invalid time zone',
      description:
        'An IANA time zone, in any case or by an alias; stored and shown by the name Intl gives it (`aMeRiCa/sao_paulo` is `America/Sao_Paulo`).',
    }),
    case_phases: phaseList('case_phases', phaseName),
    deal_phases: phaseList(
      'deal_phases',
      s.object(
        { name: phaseName, probability: s.integer({ minimum: 0, maximum: 100, 'x-message': 'Invalid probability' }) },
        ['name', 'probability'],
      ),
    ),
    portal,
  }),
);

export const SETTINGS_EXAMPLES = [
  { timezone: 'America/Sao_Paulo' },
  {
    court_calendar: {
      jurisdiction: { uf: 'SP', branch: 'state' },
      closures: [
        { date: '2025-01-25', name: 'Aniversário de São Paulo' },
        { date: '2025-08-05', name: 'PJe indisponível' },
      ],
    },
    cnj_check: 'reject',
  },
  { court_calendar: { closures: [{ date: '2025-01-25', name: 'Aniversário de São Paulo' }] } },
  { portal: { allowed_origins: ['https://app.example.com'] } },
  {
    publications: {
      watches: [{ oab_number: '123456', oab_uf: 'SP', name: 'Ana Costa' }],
      deadline: { mode: 'suggest', days: 15, counting: 'business' },
    },
  },
];

/** The settings fields a PUT sends. */
export type SettingsChange = s.Static<typeof updateSettingsBody>;

const settings = s.named(
  'Settings',
  "The team's settings.",
  s.shape({
    timezone: s.out.string,
    case_phases: s.out.strings,
    deal_phases: s.arrayOf(s.shape({ name: s.out.string, probability: s.out.integer })),
    court_calendar: {
      ...s.shape({
        jurisdiction: {
          ...s.shape({ uf: s.out.nullableString, branch: s.out.string }),
          description: JURISDICTION_ABOUT,
        },
        closures: { ...s.arrayOf(s.shape({ date: s.out.string, name: s.out.string })), description: CLOSURES_ABOUT },
      }),
      description:
        "The team's court calendar, both parts always shown: `jurisdiction` is `{ uf: null, branch: 'state' }` (the national calendar only) until the team sets one.",
    },
    cnj_check: s.out.string,
    portal: {
      ...s.shape({ allowed_origins: s.out.strings }),
      description: 'The webhooks portal: the origins that may show it in a frame.',
    },
    publications: {
      ...s.shape({
        watches: s.arrayOf(s.shape({ oab_number: s.out.string, oab_uf: s.out.string, name: s.out.nullableString })),
        deadline: s.shape({ mode: s.out.string, days: s.out.integer, counting: s.out.string }),
        backfill_days: s.out.integer,
      }),
      description:
        "The DJEN watches and what a publication's deadline becomes (defaults: no watches, mode suggest, 15 business days, 7 days of backfill).",
    },
    updated_at: s.out.nullableString,
  }),
);

/** The settings as GET and PUT answer them. */
export type SettingsView = s.Static<typeof settings>;

export const settingsResponse = s.okResponse(200, settings);
