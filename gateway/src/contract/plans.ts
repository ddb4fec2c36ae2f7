export const PLANS = ['starter', 'professional', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface PlanLimits {
  perMinute: number;
  /** null: no daily cap. */
  perDay: number | null;
}

// Requests per team and window, by plan (docs/decisions.md §7).
export const PLAN_LIMITS: Record<Plan, PlanLimits> = {
  starter: { perMinute: 60, perDay: 1_000 },
  professional: { perMinute: 300, perDay: 10_000 },
  enterprise: { perMinute: 1_000, perDay: null },
};

export const isPlan = (s: string): s is Plan => (PLANS as readonly string[]).includes(s);
