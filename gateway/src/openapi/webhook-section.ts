// The document's webhooks section: one POST per event type, its body schema (the
// resource in its detail read shape, as the delivery carries it), an example and
// how to verify the signature. What each event is comes from the event catalog
// (shared/src/webhook-catalog.ts), which GET /v1/webhooks/event-types serves too.
import { EVENT_TYPES } from '@lpm/shared/events';
import {
  EVENT_DESCRIPTIONS,
  EVENT_RESOURCES,
  eventExample,
  eventPayloadSchema,
  familyOf,
  objectComponent,
  payloadComponent,
} from '@lpm/shared/webhook-catalog';
import { REF, ref, type Json, type NamedSchema } from './refs.ts';

export const EVENTS_TAG = {
  name: 'Webhook events',
  description: 'What the platform POSTs to a subscribed URL, and how to verify it.',
};

const SIGNATURE_RULE =
  'The signed text is `{X-Service-Timestamp}.{raw body}`, exactly as received; the key is the webhook secret returned once at creation; the signature is the lowercase hex HMAC-SHA256 of that text. ' +
  'Compare it with `X-Service-Signature` in constant time, and reject a delivery whose timestamp is more than 300 seconds from now (replay protection). ' +
  'The SDK does all of this: `verifyWebhook(rawBody, headers, secret)`. Each delivery also carries the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) for receivers that use a Standard Webhooks library.';

const camel = (event: string) => event.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase());

export function webhookSection(schemas: Json): Json {
  // A deployment without a service has neither its resource schema nor its events.
  const families = [...new Set(EVENT_TYPES.map(familyOf))].filter((f) => schemas[EVENT_RESOURCES[f].schema]);
  for (const family of families) {
    const { schema, omit } = EVENT_RESOURCES[family];
    if (omit) {
      const { properties, required, title: _, description, ...rest } = schemas[schema] as NamedSchema;
      const object = objectComponent(family);
      schemas[object] = {
        ...rest,
        title: object,
        description: `${description} Without ${omit.map((f) => `\`${f}\``).join(' and ')}, which a read computes.`,
        properties: Object.fromEntries(Object.entries(properties).filter(([p]) => !omit.includes(p))),
        required: required.filter((p) => !omit.includes(p)),
      };
    }
    schemas[payloadComponent(family)] = eventPayloadSchema(family, REF);
  }
  const signatureHeaders = [
    {
      name: 'X-Service-Signature',
      description: 'Lowercase hex HMAC-SHA256 of `{timestamp}.{raw body}` keyed with the webhook secret.',
      schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    },
    {
      name: 'X-Service-Timestamp',
      description: 'Unix time (seconds) of sending; reject it when more than 300 s from now.',
      schema: { type: 'string', pattern: '^\\d+$' },
    },
    { name: 'X-Service-Event-Id', description: 'The event id (also `id` in the body).', schema: { type: 'string' } },
    { name: 'webhook-id', description: 'Standard Webhooks: the event id.', schema: { type: 'string' } },
    { name: 'webhook-timestamp', description: 'Standard Webhooks: the same Unix time.', schema: { type: 'string' } },
    {
      name: 'webhook-signature',
      description:
        'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with the bytes the secret encodes after `whsec_`. After a secret rotation, one such signature per live secret, space separated, the current one first: a delivery is genuine when any of them verifies.',
      schema: { type: 'string' },
    },
  ].map((h) => ({ ...h, in: 'header', required: true }));

  return Object.fromEntries(
    EVENT_TYPES.filter((event) => families.includes(familyOf(event))).map((event) => {
      const family = familyOf(event);
      return [
        event,
        {
          post: {
            operationId: `${camel(event)}Event`,
            summary: event,
            description: `${EVENT_DESCRIPTIONS[event]}\n\nPOSTed to each active webhook subscribed to \`${event}\` (or \`*\`). Answer 2xx within 5 seconds; otherwise it is retried at 5 min, 30 min, 2 h, 12 h and 24 h, and after 6 failed attempts in a row the webhook is deactivated and its owner e-mailed. The same event may arrive more than once: deduplicate by \`id\`.\n\n**Verifying.** ${SIGNATURE_RULE}`,
            tags: [EVENTS_TAG.name],
            security: [],
            parameters: signatureHeaders,
            requestBody: {
              required: true,
              content: { 'application/json': { schema: ref(payloadComponent(family)), example: eventExample(event) } },
            },
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
