// The gateway's own records: teams, their users and API keys (decisions §6).
import { defineEntity, p } from '@mikro-orm/mongodb';

export const PLANS = ['starter', 'professional', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export const TeamEntity = defineEntity({
  name: 'Team',
  collection: 'teams',
  properties: {
    _id: p.string().primary(),
    name: p.string(),
    plan: p.string(),
    timezone: p.string(),
    // Team settings (decisions §8); absent until first changed, read as the defaults.
    case_phases: p.json<string[]>().nullable(),
    deal_phases: p.json<{ name: string; probability: number }[]>().nullable(),
    settings_updated_at: p.datetime().nullable(),
    owner_user_id: p.string(),
    created_at: p.datetime(),
  },
});

export const UserEntity = defineEntity({
  name: 'User',
  collection: 'users',
  properties: {
    _id: p.string().primary(),
    team_id: p.string(),
    name: p.string(),
    email: p.string(),
    created_at: p.datetime(),
  },
  uniques: [{ properties: ['team_id', 'email'] }],
});

export const ApiKeyEntity = defineEntity({
  name: 'ApiKey',
  collection: 'api_keys',
  properties: {
    _id: p.string().primary(),
    team_id: p.string(),
    user_id: p.string(),
    scopes: p.json<string[]>(),
    digest: p.string(),
    created_at: p.datetime(),
    revoked_at: p.datetime().nullable(),
  },
  uniques: [{ properties: ['digest'] }],
});

export const GATEWAY_ENTITIES = [TeamEntity, UserEntity, ApiKeyEntity];
