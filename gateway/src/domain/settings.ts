// Team settings (decisions §8): case kanban phases, deal pipeline phases (name and
// suggested probability) and the time zone. A phase that records of the service
// owning it still use cannot be removed; renaming a phase removes the old name.
import { badRequest, businessRule, invalidField } from '@lpm/shared/errors';
import type { Identity, TeamSettings } from '@lpm/shared/identity';
import type { TeamsRepository } from '../data/teams-repository.ts';
import type { SettingsChange } from '../routes/settings.ts';
import { isTimeZone, type Accounts, type Team } from './accounts.ts';

export interface SettingsView extends TeamSettings {
  updated_at: string | null;
}

export type PhaseKind = 'case' | 'deal';

/** The services owning each kind of phase (upstream/cases-and-deals-services.ts). */
export interface PhaseOwners {
  /** Which of these phases the team's records use, as the service owning that kind of phase says. */
  phasesInUse(who: Identity, kind: PhaseKind, phases: string[]): Promise<string[]>;
}

export interface SettingsOptions {
  teams: TeamsRepository;
  accounts: Accounts;
  phaseOwners: PhaseOwners;
}

// Services receive the settings in a request header on every request; this keeps
// that header (base64 of this JSON) well inside Node's 16 KiB header limit.
export const MAX_SETTINGS_BYTES = 8 * 1024;

type PhaseField = 'case_phases' | 'deal_phases';
const PHASE_KIND: Record<PhaseField, PhaseKind> = { case_phases: 'case', deal_phases: 'deal' };

const phaseNames = (s: SettingsChange, field: PhaseField): string[] | undefined =>
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
    if (Object.keys(change).length === 0) throw badRequest('No fields to update');
    const next = normalize(change);
    const current = await this.opts.accounts.getTeam(who.teamId);
    const merged: TeamSettings = {
      timezone: next.timezone ?? current.timezone,
      case_phases: next.case_phases ?? current.case_phases,
      deal_phases: next.deal_phases ?? current.deal_phases,
    };
    if (Buffer.byteLength(JSON.stringify(merged)) > MAX_SETTINGS_BYTES) {
      throw badRequest(`Settings must be at most ${MAX_SETTINGS_BYTES} bytes as JSON`, { type: 'invalid', max_bytes: MAX_SETTINGS_BYTES });
    }
    await this.refuseRemovingPhasesInUse(who, current, next);
    await this.opts.teams.setSettings(who.teamId, next, new Date());
    return this.get(who.teamId);
  }

  private async refuseRemovingPhasesInUse(who: Identity, current: Team, next: SettingsChange): Promise<void> {
    const fields = Object.keys(PHASE_KIND) as PhaseField[];
    const inUse = await Promise.all(
      fields.map(async (field) => {
        const kept = phaseNames(next, field);
        const removed = kept ? (phaseNames(current, field) ?? []).filter((p) => !kept.includes(p)) : [];
        return removed.length ? this.opts.phaseOwners.phasesInUse(who, PHASE_KIND[field], removed) : [];
      }),
    );
    fields.forEach((field, i) => {
      if (inUse[i].length) throw businessRule('Phase in use', 'phase_in_use', { field, phases: inUse[i] });
    });
  }
}

const view = (t: Team): SettingsView => ({
  timezone: t.timezone,
  case_phases: t.case_phases,
  deal_phases: t.deal_phases,
  updated_at: t.settings_updated_at?.toISOString() ?? null,
});

/** The change with phase names trimmed; the rules the body schema cannot state. */
function normalize(change: SettingsChange): SettingsChange {
  const out: SettingsChange = {};
  if (change.timezone !== undefined) {
    if (!isTimeZone(change.timezone)) throw invalidField('timezone', 'Invalid time zone');
    out.timezone = change.timezone;
  }
  if (change.case_phases !== undefined) {
    out.case_phases = change.case_phases.map((name, i) => phaseName(`case_phases.${i}`, name));
    refuseDuplicates('case_phases', out.case_phases);
  }
  if (change.deal_phases !== undefined) {
    out.deal_phases = change.deal_phases.map((p, i) => ({ name: phaseName(`deal_phases.${i}.name`, p.name), probability: p.probability }));
    refuseDuplicates('deal_phases', out.deal_phases.map((p) => p.name));
  }
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
    if (seen.has(name)) throw invalidField(field, 'Duplicate phase', { phase: name });
    seen.add(name);
  }
}
