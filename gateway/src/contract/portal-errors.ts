// The webhooks portal's conditions, with the messages its callers see.
import { notFound, unauthorized } from '@lpm/shared/errors';

export const portalSessionNotFound = () => notFound('Portal session not found');

export const portalSessionExpired = () => unauthorized('Portal session expired');

/** A portal session token on a route outside /v1/webhooks, or on the portal sessions themselves. */
export const portalTokenRefused = () => unauthorized('A portal session token is valid only for the webhooks routes');
