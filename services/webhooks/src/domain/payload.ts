// The body a subscriber receives (README, "Webhooks, for integrators"): the event envelope without what
// is internal to the platform (the acting user, the trace context), plus the
// webhook it is delivered to.
export interface PayloadEvent {
  id: string;
  type: string;
  api_version: string;
  created_at: string;
  team_id: string;
  data: { object: unknown; previous_attributes: Record<string, unknown> | null };
}

export function payloadBody(e: PayloadEvent, webhookId: string): string {
  return JSON.stringify({
    id: e.id,
    type: e.type,
    api_version: e.api_version,
    created_at: e.created_at,
    data: e.data,
    team_id: e.team_id,
    webhook_id: webhookId,
  });
}
