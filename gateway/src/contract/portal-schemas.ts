// The request and response schemas of the webhooks portal sessions (POST and DELETE /v1/webhooks/portal-sessions).
import * as s from '@lpm/shared/http/schemas';

/** How long a session lasts: by default, and the bounds. */
export const DEFAULT_PORTAL_MINUTES = 60;
export const MIN_PORTAL_MINUTES = 5;
export const MAX_PORTAL_MINUTES = 1440;

export const openPortalSessionBody = s.named(
  'CreatePortalSessionRequest',
  'How long the session lasts, in minutes.',
  s.object({
    expires_in_minutes: s.integer({
      minimum: MIN_PORTAL_MINUTES,
      maximum: MAX_PORTAL_MINUTES,
      default: DEFAULT_PORTAL_MINUTES,
      'x-message': `expires_in_minutes must be an integer from ${MIN_PORTAL_MINUTES} to ${MAX_PORTAL_MINUTES}`,
    }),
  }),
);

export const portalSessionParams = s.object(
  { id: s.typed<string>({ type: 'string', maxLength: 100, examples: ['psn_01jd3k8m5x7q2w9e4r6t8y0u1i'] }) },
  ['id'],
);

export type OpenPortalSessionBody = s.Static<typeof openPortalSessionBody>;

const opened = s.named(
  'PortalSession',
  "A webhooks portal session: the page's URL (the token travels in its fragment, never to a server log), and the token, shown only this once.",
  s.shape({ id: s.out.string, url: s.out.string, token: s.out.string, expires_at: s.out.string }),
);
const revoked = s.named(
  'PortalSessionRevoked',
  'A revoked portal session: its token is refused from now on.',
  s.shape({ id: s.out.string, revoked_at: s.out.string }),
);

export type PortalSessionOpened = s.Static<typeof opened>;
export type PortalSessionRevoked = s.Static<typeof revoked>;

export const portalResponses = { opened: s.okResponse(201, opened), revoked: s.okResponse(200, revoked) };
