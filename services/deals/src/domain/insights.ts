// ai_insights of a deal: deterministic figures from the deal and its team's own
// history, each with the inputs that made it (README.md, "ai_insights").
import { DAY_MS, dayIn } from '@lpm/shared/time';
import { segmentKey, type DealRecord, type PhaseStint } from '../data/deal-entity.ts';
import type { DealActivityCounts } from '../upstream/activities-service.ts';
import { valueBand } from './deal-shape.ts';

/** m: how many closed deals the phase probability counts as (the Beta-Binomial prior's weight). */
export const PRIOR_WEIGHT = 10;
/** Closed deals a segment needs before its win rate is blended in. */
export const MIN_SAMPLE = 5;
/** Won deals that passed through a phase before their median time there is used. */
export const MIN_PHASE_SAMPLE = 3;

/** The team's closed deals, by segment (segmentKey), and the time its won deals spent in each phase. */
export interface TeamHistory {
  segments: Map<string, { closed: number; won: number }>;
  /** Per won deal, the time it spent in each phase. */
  wonStints: PhaseStint[][];
}

export interface Insights {
  win_probability: number;
  health: 'good' | 'at_risk' | 'stalled';
  risk_factors: string[];
  basis: {
    phase_probability: number;
    segment: { source: string | null; value_band: string | null } | null;
    closed: number;
    won: number;
    prior_weight: number;
    min_sample: number;
    days_in_phase: number | null;
    median_days_in_phase: number | null;
    won_deals_through_phase: number;
    days_past_expected_close: number | null;
    open_activities: number | null;
    overdue_activities: number | null;
  };
}

const round1 = (n: number) => Math.round(n * 10) / 10;

function median(sorted: number[]): number {
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;

/** The segment whose win rate is blended in: source and value band, else source alone, else none (thin history). */
function segmentOf(r: DealRecord, history: TeamHistory) {
  const band = valueBand(r.value_cents);
  const exact = history.segments.get(segmentKey(r.source, band));
  if (exact && exact.closed >= MIN_SAMPLE) return { source: r.source, value_band: band, ...exact };
  const bySource = { closed: 0, won: 0 };
  for (const [key, s] of history.segments) {
    const [source] = JSON.parse(key) as [string | null, string | null];
    if (source !== r.source) continue;
    bySource.closed += s.closed;
    bySource.won += s.won;
  }
  if (bySource.closed >= MIN_SAMPLE) return { source: r.source, value_band: null, ...bySource };
  return null;
}

function days(n: number): string {
  return `${n} day${n === 1 ? '' : 's'}`;
}

/**
 * The insights of `r` at `now`. `phaseProbability` is the pipeline's suggested
 * probability of the deal's phase (0-100).
 */
export function insightsOf(
  r: DealRecord,
  phaseProbability: number,
  history: TeamHistory,
  timeZone: string,
  now: Date,
  activities: DealActivityCounts,
): Insights {
  const segment = r.status === 'ativo' ? segmentOf(r, history) : null;
  const p0 = phaseProbability / 100;
  let win: number;
  if (r.status !== 'ativo') win = r.won_at ? 100 : 0;
  else if (segment) win = round1(((segment.won + PRIOR_WEIGHT * p0) / (segment.closed + PRIOR_WEIGHT)) * 100);
  else win = round1(phaseProbability);

  const factors: string[] = [];
  let stalled = false;
  const phaseTimes = history.wonStints
    .flatMap((stints) => stints.filter((s) => s.phase === r.phase).map((s) => s.ms / DAY_MS))
    .sort((a, b) => a - b);
  const medianDays = phaseTimes.length >= MIN_PHASE_SAMPLE ? round1(median(phaseTimes)) : null;
  const daysInPhase = r.status === 'ativo' ? Math.floor((now.getTime() - r.phase_entered_at.getTime()) / DAY_MS) : null;
  if (daysInPhase !== null && medianDays !== null && daysInPhase > medianDays) {
    factors.push(`${days(daysInPhase)} in phase ${r.phase}; won deals of this team spend a median of ${medianDays}`);
    if (daysInPhase > 2 * medianDays) stalled = true;
  }
  let pastClose: number | null = null;
  if (r.status === 'ativo' && r.expected_close_date) {
    pastClose = dayNumber(dayIn(timeZone, now)) - dayNumber(r.expected_close_date);
    if (pastClose > 0) factors.push(`expected close date passed ${days(pastClose)} ago`);
  }
  if (r.status === 'ativo') {
    if (activities.open === 0) factors.push('no open activity');
    if (activities.overdue > 0)
      factors.push(`${activities.overdue} overdue ${activities.overdue === 1 ? 'activity' : 'activities'}`);
  }

  return {
    win_probability: win,
    health: stalled ? 'stalled' : factors.length ? 'at_risk' : 'good',
    risk_factors: factors,
    basis: {
      phase_probability: phaseProbability,
      segment: segment ? { source: segment.source, value_band: segment.value_band } : null,
      closed: segment?.closed ?? 0,
      won: segment?.won ?? 0,
      prior_weight: PRIOR_WEIGHT,
      min_sample: MIN_SAMPLE,
      days_in_phase: daysInPhase,
      median_days_in_phase: medianDays,
      won_deals_through_phase: phaseTimes.length,
      days_past_expected_close: pastClose,
      open_activities: r.status === 'ativo' ? activities.open : null,
      overdue_activities: r.status === 'ativo' ? activities.overdue : null,
    },
  };
}
