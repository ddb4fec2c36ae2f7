// The document's webhooks section: one POST per event type, its body schema (the
// resource in its detail read shape, as the delivery carries it) and how to verify
// the signature.
import { EVENT_TYPES } from '@lpm/shared/events';
import { ref, type Json, type NamedSchema } from './refs.ts';
import { EVENT_DOCS, EVENT_RESOURCES } from './webhook-events.ts';

export const EVENTS_TAG = { name: 'Webhook events', description: 'What the platform POSTs to a subscribed URL, and how to verify it.' };

const SIGNATURE_RULE =
  'The signed text is `{X-Service-Timestamp}.{raw body}`, exactly as received; the key is the webhook secret returned once at creation; the signature is the lowercase hex HMAC-SHA256 of that text. ' +
  'Compare it with `X-Service-Signature` in constant time, and reject a delivery whose timestamp is more than 300 seconds from now (replay protection). ' +
  'The SDK does all of this: `verifyWebhook(rawBody, headers, secret)`. Each delivery also carries the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) for receivers that use a Standard Webhooks library.';

const camel = (event: string) => event.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase());

export function webhookSection(schemas: Json): Json {
  // A deployment without a service has neither its resource schema nor its events.
  const families = [...new Set(EVENT_TYPES.map((e) => e.split('.')[0]))].filter((f) => schemas[EVENT_RESOURCES[f].schema]);
  for (const family of families) {
    const { schema, omit } = EVENT_RESOURCES[family];
    let object = schema;
    if (omit) {
      const { properties, required, title: _, description, ...rest } = schemas[schema] as NamedSchema;
      object = `${schema}EventObject`;
      schemas[object] = {
        ...rest,
        title: object,
        description: `${description} Without ${omit.map((f) => `\`${f}\``).join(' and ')}, which a read computes.`,
        properties: Object.fromEntries(Object.entries(properties).filter(([p]) => !omit.includes(p))),
        required: required.filter((p) => !omit.includes(p)),
      };
    }
    const resource = schema;
    schemas[`${resource}Event`] = {
      title: `${resource}Event`,
      description: `The body of a ${family}.* delivery.`,
      type: 'object',
      required: ['id', 'type', 'api_version', 'created_at', 'data', 'team_id', 'webhook_id'],
      properties: {
        id: { type: 'string', description: 'The event id (evt_ prefix), the same for every retry of this event to this webhook: use it to drop duplicates.', examples: ['evt_01jd3kc4d6f8h0k2n4q6s8u0w2'] },
        type: { type: 'string', enum: EVENT_TYPES.filter((e) => e.startsWith(`${family}.`)) },
        api_version: { type: 'string', const: 'v1' },
        created_at: { type: 'string', format: 'date-time' },
        data: {
          type: 'object',
          required: ['object', 'previous_attributes'],
          properties: {
            object: { ...ref(object), description: 'The resource after the change, in its detail read shape.' },
            previous_attributes: { type: ['object', 'null'], additionalProperties: true, description: 'The prior values of the changed fields; null for creation and time-driven events.' },
          },
        },
        team_id: { type: 'string' },
        webhook_id: { type: 'string' },
      },
    };
  }
  const signatureHeaders = [
    { name: 'X-Service-Signature', description: 'Lowercase hex HMAC-SHA256 of `{timestamp}.{raw body}` keyed with the webhook secret.', schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
    { name: 'X-Service-Timestamp', description: 'Unix time (seconds) of sending; reject it when more than 300 s from now.', schema: { type: 'string', pattern: '^\\d+$' } },
    { name: 'X-Service-Event-Id', description: 'The event id (also `id` in the body).', schema: { type: 'string' } },
    { name: 'webhook-id', description: 'Standard Webhooks: the event id.', schema: { type: 'string' } },
    { name: 'webhook-timestamp', description: 'Standard Webhooks: the same Unix time.', schema: { type: 'string' } },
    { name: 'webhook-signature', description: 'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with the bytes the secret encodes after `whsec_`. After a secret rotation, one such signature per live secret, space separated, the current one first: a delivery is genuine when any of them verifies.', schema: { type: 'string' } },
  ].map((h) => ({ ...h, in: 'header', required: true }));

  return Object.fromEntries(
    EVENT_TYPES.filter((event) => families.includes(event.split('.')[0])).map((event) => {
      const resource = EVENT_RESOURCES[event.split('.')[0]].schema;
      return [
        event,
        {
          post: {
            operationId: `${camel(event)}Event`,
            summary: event,
            description: `${EVENT_DOCS[event]}\n\nPOSTed to each active webhook subscribed to \`${event}\` (or \`*\`). Answer 2xx within 5 seconds; otherwise it is retried at 5 min, 30 min, 2 h, 12 h and 24 h, and after 6 failed attempts in a row the webhook is deactivated and its owner e-mailed. The same event may arrive more than once: deduplicate by \`id\`.\n\n**Verifying.** ${SIGNATURE_RULE}`,
            tags: [EVENTS_TAG.name],
            security: [],
            parameters: signatureHeaders,
            requestBody: { required: true, content: { 'application/json': { schema: ref(`${resource}Event`) } } },
            responses: {
              '200': { description: 'Any 2xx within 5 seconds confirms the delivery.' },
              '4XX': { description: 'Any other answer, or none within 5 seconds, fails the attempt: it is retried.' },
            },
          },
        },
      ];
    }),
  );
}
