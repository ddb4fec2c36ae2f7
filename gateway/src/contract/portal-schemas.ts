// The request and response schemas of the webhooks portal sessions (POST and DELETE /v1/webhooks/portal-sessions).
import { integer, named, object, okResponse, out, shape, typed, type Static } from '@lpm/shared/http/schemas';

/** How long a session lasts: by default, and the bounds. */
export const DEFAULT_PORTAL_MINUTES = 60;
export const MIN_PORTAL_MINUTES = 5;
export const MAX_PORTAL_MINUTES = 1440;

export const openPortalSessionBody = named(
  'CreatePortalSessionRequest',
  'How long the session lasts, in minutes.',
  object({
    expires_in_minutes: integer({
      minimum: MIN_PORTAL_MINUTES,
      maximum: MAX_PORTAL_MINUTES,
      default: DEFAULT_PORTAL_MINUTES,
      'x-message': `expires_in_minutes must be an integer from ${MIN_PORTAL_MINUTES} to ${MAX_PORTAL_MINUTES}`,
    }),
  }),
);

export const portalSessionParams = object(
  { id: typed<string>({ type: 'string', maxLength: 100, examples: ['psn_01jd3k8m5x7q2w9e4r6t8y0u1i'] }) },
  ['id'],
);

export type OpenPortalSessionBody = Static<typeof openPortalSessionBody>;

const opened = named(
  'PortalSession',
  "A webhooks portal session: the page's URL (the token travels in its fragment, never to a server log), and the token, shown only this once.",
  shape({ id: out.string, url: out.string, token: out.string, expires_at: out.string }),
);
const revoked = named(
  'PortalSessionRevoked',
  'A revoked portal session: its token is refused from now on.',
  shape({ id: out.string, revoked_at: out.string }),
);

export type PortalSessionOpened = Static<typeof opened>;
export type PortalSessionRevoked = Static<typeof revoked>;

export const portalResponses = { opened: okResponse(201, opened), revoked: okResponse(200, revoked) };
