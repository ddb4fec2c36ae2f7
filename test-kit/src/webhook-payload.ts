// What every webhook delivery's body holds at its top level, whatever the event.

/** The body's fields, sorted by name. */
export const PAYLOAD_FIELDS = ['api_version', 'created_at', 'data', 'id', 'team_id', 'type', 'webhook_id'];
