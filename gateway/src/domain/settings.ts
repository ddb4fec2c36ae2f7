// Team settings (docs/decisions.md §8): case kanban phases, deal pipeline phases (name and
// suggested probability), the time zone, the court calendar and the CNJ-number
// check. A phase that records of the service owning it still use cannot
// be removed; renaming a phase removes the old name. A change of the court calendar
// or of the time zone reaches the services through CalendarSync.
import { badRequest, invalidField, noFieldsToUpdate } from '@lpm/shared/errors';
import { exact } from '@lpm/shared/http/schemas';
import { canonicalTimeZone } from '@lpm/shared/time';
import type { Identity, TeamSettings } from '@lpm/shared/identity';
import { DEFAULT_JURISDICTION, type CourtCalendarSettings } from '@lpm/shared/court-calendar';
import type { SettingsWrite, TeamsRepository } from '../data/teams-repository.ts';
import type { SettingsChange, SettingsView } from '../contract/settings-schemas.ts';
import { duplicateClosureDate, duplicatePhase, duplicateWatch, phaseInUse } from '../contract/settings-errors.ts';
import type { Accounts, Team } from './accounts.ts';
import type { CalendarSync } from './calendar-sync.ts';
import type { PhaseKind, PhaseOwners } from '../upstream/cases-and-deals-services.ts';

export interface SettingsOptions {
  teams: TeamsRepository;
  accounts: Accounts;
  phaseOwners: PhaseOwners;
  calendarSync: CalendarSync;
}

// Services receive the settings in a request header on every request; this keeps
// that header (base64 of this JSON) well inside Node's 16 KiB header limit.
export const MAX_SETTINGS_BYTES = 8 * 1024;

type PhaseField = 'case_phases' | 'deal_phases';
const PHASE_KIND: Record<PhaseField, PhaseKind> = { case_phases: 'case', deal_phases: 'deal' };

const phaseNames = (s: Partial<TeamSettings>, field: PhaseField): string[] | undefined =>
  field === 'case_phases' ? s.case_phases : s.deal_phases?.map((p) => p.name);

export class Settings {
  private readonly opts: SettingsOptions;

  constructor(opts: SettingsOptions) {
    this.opts = opts;
  }

  async get(teamId: string): Promise<SettingsView> {
    return view(await this.opts.accounts.getTeam(teamId));
  }

  /** Changes the fields sent; the answer is the whole settings after the change. */
  async update(who: Identity, change: SettingsChange): Promise<SettingsView> {
    if (Object.keys(change).length === 0) throw noFieldsToUpdate();
    const { court_calendar: calendarSent, ...sent } = normalize(change);
    const current = await this.opts.accounts.getTeam(who.teamId);
    // Each part of the calendar may come alone: the other keeps its value. The store
    // sets each part sent on its own, so a concurrent change of the other part is kept.
    const calendar = calendarSent && { ...current.court_calendar, ...calendarSent };
    const merged: TeamSettings = {
      timezone: sent.timezone ?? current.timezone,
      case_phases: sent.case_phases ?? current.case_phases,
      deal_phases: sent.deal_phases ?? current.deal_phases,
      court_calendar: calendar ?? current.court_calendar,
      cnj_check: sent.cnj_check ?? current.cnj_check,
    };
    if (Buffer.byteLength(JSON.stringify(merged)) > MAX_SETTINGS_BYTES) {
      throw badRequest(`Settings must be at most ${MAX_SETTINGS_BYTES} bytes as JSON`, {
        type: 'invalid',
        max_bytes: MAX_SETTINGS_BYTES,
      });
    }
    await this.refuseRemovingPhasesInUse(who, current, sent);
    const now = new Date();
    const calendarChanged =
      calendar !== undefined && JSON.stringify(calendar) !== JSON.stringify(current.court_calendar);
    const zoneChanged = sent.timezone !== undefined && sent.timezone !== current.timezone;
    const parts = [
      ...(calendarChanged ? (['court_calendar'] as const) : []),
      ...(zoneChanged ? (['timezone'] as const) : []),
    ];
    const told = parts.length > 0;
    if (told) await this.opts.calendarSync.mark(who, now, parts);
    await this.opts.teams.setSettings(who.teamId, calendarSent ? { ...sent, court_calendar: calendarSent } : sent, now);
    // Not awaited: the retry pass repeats it if it fails.
    if (told) void this.opts.calendarSync.push(who.teamId, who.userId);
    return this.get(who.teamId);
  }

  private async refuseRemovingPhasesInUse(who: Identity, current: Team, next: Partial<TeamSettings>): Promise<void> {
    const fields = Object.keys(PHASE_KIND) as PhaseField[];
    const inUse = await Promise.all(
      fields.map(async (field) => {
        const kept = phaseNames(next, field);
        const removed = kept ? (phaseNames(current, field) ?? []).filter((p) => !kept.includes(p)) : [];
        return removed.length ? this.opts.phaseOwners.phasesInUse(who, PHASE_KIND[field], removed) : [];
      }),
    );
    fields.forEach((field, i) => {
      if (inUse[i].length) throw phaseInUse(field, inUse[i]);
    });
  }
}

const view = (t: Team): SettingsView =>
  exact<SettingsView>()({
    timezone: t.timezone,
    case_phases: t.case_phases,
    deal_phases: t.deal_phases,
    court_calendar: t.court_calendar,
    cnj_check: t.cnj_check,
    portal: { allowed_origins: t.portal_allowed_origins },
    publications: t.publications,
    updated_at: t.settings_updated_at?.toISOString() ?? null,
  });

/** The change with phase names trimmed; the rules the body schema cannot state. */
function normalize(change: SettingsChange): SettingsWrite {
  const out: SettingsWrite = {};
  if (change.timezone !== undefined) {
    const zone = canonicalTimeZone(change.timezone);
    if (!zone) throw invalidField('timezone', 'Invalid time zone');
    out.timezone = zone;
  }
  if (change.case_phases !== undefined) {
    out.case_phases = change.case_phases.map((name, i) => phaseName(`case_phases.${i}`, name));
    refuseDuplicates('case_phases', out.case_phases);
  }
  if (change.deal_phases !== undefined) {
    out.deal_phases = change.deal_phases.map((p, i) => ({
      name: phaseName(`deal_phases.${i}.name`, p.name),
      probability: p.probability,
    }));
    refuseDuplicates(
      'deal_phases',
      out.deal_phases.map((p) => p.name),
    );
  }
  if (change.court_calendar !== undefined) out.court_calendar = courtCalendar(change.court_calendar);
  if (change.cnj_check !== undefined) out.cnj_check = change.cnj_check;
  if (change.portal !== undefined) out.portal_allowed_origins = portalOrigins(change.portal.allowed_origins);
  if (change.publications !== undefined) out.publications = publications(change.publications);
  return out;
}

/** The parts of the calendar sent: names trimmed and closures in date order, one closure a day; a jurisdiction whole. */
function courtCalendar(c: NonNullable<SettingsChange['court_calendar']>): Partial<CourtCalendarSettings> {
  const out: Partial<CourtCalendarSettings> = {};
  if (c.jurisdiction)
    out.jurisdiction = {
      uf: c.jurisdiction.uf ?? DEFAULT_JURISDICTION.uf,
      branch: c.jurisdiction.branch ?? DEFAULT_JURISDICTION.branch,
    };
  if (c.closures) {
    const closures = c.closures
      .map((x, i) => ({ date: x.date, name: phaseName(`court_calendar.closures.${i}.name`, x.name) }))
      .sort((a, b) => a.date.localeCompare(b.date));
    closures.forEach((x, i) => {
      if (i > 0 && closures[i - 1].date === x.date) throw duplicateClosureDate(x.date);
    });
    out.closures = closures;
  }
  return out;
}

/** Each origin as browsers write it (lower case, no default port), once. */
function portalOrigins(origins: string[]): string[] {
  const out = origins.map((raw, i) => {
    const url = URL.parse(raw);
    if (!url || url.origin === 'null') throw invalidField(`portal.allowed_origins.${i}`, 'Invalid origin');
    return url.origin;
  });
  return [...new Set(out)];
}

/** The parts of the publication settings sent: watches without duplicates (one per OAB number and state), names trimmed. */
function publications(p: NonNullable<SettingsChange['publications']>): NonNullable<SettingsWrite['publications']> {
  const out: NonNullable<SettingsWrite['publications']> = {};
  if (p.watches) {
    const seen = new Set<string>();
    out.watches = p.watches.map((w, i) => {
      const oab_number = w.oab_number.replace(/^0+(?=\d)/, '');
      const key = `${w.oab_uf}:${oab_number}`;
      if (seen.has(key)) throw duplicateWatch(i);
      seen.add(key);
      return { oab_number, oab_uf: w.oab_uf, name: w.name?.trim() || null };
    });
  }
  if (p.deadline) out.deadline = p.deadline;
  if (p.backfill_days !== undefined) out.backfill_days = p.backfill_days;
  return out;
}

function phaseName(field: string, raw: string): string {
  const name = raw.trim();
  if (!name) throw invalidField(field, `${field} must not be empty`);
  return name;
}

function refuseDuplicates(field: PhaseField, names: string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw duplicatePhase(field, name);
    seen.add(name);
  }
}
