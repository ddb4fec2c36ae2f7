// The request and response schemas of GET and PUT /v1/settings (docs/decisions.md §8).
import { arrayOf, enumOf, integer, named, object, okResponse, out, shape, text, typed, type Schema, type Static } from '@lpm/shared/http/schemas';
import { CNJ_CHECKS, closuresSchema, jurisdictionSchema } from '@lpm/shared/court-calendar';

const MAX_PHASES = 30;
/** Closures travel in the settings header (MAX_SETTINGS_BYTES); a year of municipal holidays and outages fits. */
const MAX_CLOSURES = 100;

const JURISDICTION_ABOUT =
  "The team's court: `uf` adds that state's holidays (null: the national calendar only) and `branch` that branch's closures (default state). Sent whole: a part left out takes its default.";
const CLOSURES_ABOUT = "Days the team's court had no business (municipal holidays, closures, its system down), in date order, one a day. Sent whole: the list replaces the team's.";

const courtCalendar = {
  ...object({
    jurisdiction: { ...jurisdictionSchema(), description: JURISDICTION_ABOUT },
    closures: { ...closuresSchema(MAX_CLOSURES), description: CLOSURES_ABOUT },
  }),
  minProperties: 1,
  description: 'Either part, or both: the part not sent keeps its value. A team that never set a jurisdiction counts the national calendar only.',
  'x-message': 'court_calendar must be an object with jurisdiction, closures or both',
};

const phaseName = typed<string>({ type: 'string', minLength: 1, maxLength: 100 });
const phaseList = <T>(field: string, items: Schema<T>) =>
  typed<T[]>({
    type: 'array',
    minItems: 1,
    maxItems: MAX_PHASES,
    items,
    'x-message': `${field} must be a list of 1 to ${MAX_PHASES} phases`,
  });

/** Origins that may frame the webhooks portal, at most; each a scheme and host (and port), no path. */
export const MAX_PORTAL_ORIGINS = 20;
const origin = text(300, { pattern: '^https?://[^/?#\\s*;,\'"]+$', 'x-message': 'Invalid origin' });
const portal = {
  ...object({ allowed_origins: arrayOf(origin, { maxItems: MAX_PORTAL_ORIGINS, 'x-message': `allowed_origins must be a list of at most ${MAX_PORTAL_ORIGINS} origins` }) }, ['allowed_origins']),
  description: "The webhooks portal (`/portal`): the origins whose pages may show it in a frame (its Content-Security-Policy's frame-ancestors); none by default. Sent whole: the list replaces the team's.",
};

export const updateSettingsBody = named('UpdateSettingsRequest', 'Any subset of the settings.', object({
  court_calendar: courtCalendar,
  cnj_check: enumOf(CNJ_CHECKS, 'Invalid cnj_check'),
  timezone: text(100, { 'x-message': 'Invalid time zone', description: 'An IANA time zone, in any case or by an alias; stored and shown by the name Intl gives it (`aMeRiCa/sao_paulo` is `America/Sao_Paulo`).' }),
  case_phases: phaseList('case_phases', phaseName),
  deal_phases: phaseList(
    'deal_phases',
    object({ name: phaseName, probability: integer({ minimum: 0, maximum: 100, 'x-message': 'Invalid probability' }) }, ['name', 'probability']),
  ),
  portal,
}));

export const SETTINGS_EXAMPLES = [
  { timezone: 'America/Sao_Paulo' },
  {
    court_calendar: { jurisdiction: { uf: 'SP', branch: 'state' }, closures: [{ date: '2025-01-25', name: 'Aniversário de São Paulo' }, { date: '2025-08-05', name: 'PJe indisponível' }] },
    cnj_check: 'reject',
  },
  { court_calendar: { closures: [{ date: '2025-01-25', name: 'Aniversário de São Paulo' }] } },
  { portal: { allowed_origins: ['https://app.example.com'] } },
];

/** The settings fields a PUT sends. */
export type SettingsChange = Static<typeof updateSettingsBody>;

const settings = named('Settings', "The team's settings.", shape({
  timezone: out.string,
  case_phases: out.strings,
  deal_phases: arrayOf(shape({ name: out.string, probability: out.integer })),
  court_calendar: {
    ...shape({
      jurisdiction: { ...shape({ uf: out.nullableString, branch: out.string }), description: JURISDICTION_ABOUT },
      closures: { ...arrayOf(shape({ date: out.string, name: out.string })), description: CLOSURES_ABOUT },
    }),
    description: "The team's court calendar, both parts always shown: `jurisdiction` is `{ uf: null, branch: 'state' }` (the national calendar only) until the team sets one.",
  },
  cnj_check: out.string,
  portal: { ...shape({ allowed_origins: out.strings }), description: 'The webhooks portal: the origins that may show it in a frame.' },
  updated_at: out.nullableString,
}));

/** The settings as GET and PUT answer them. */
export type SettingsView = Static<typeof settings>;

export const settingsResponse = okResponse(200, settings);
