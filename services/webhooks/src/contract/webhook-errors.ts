// The webhooks domain's conditions, each with its fixed message (docs/decisions.md §1, §5).
import { businessRule, conflict, notFound } from '@lpm/shared/errors';

export const webhookNotFound = () => notFound('Webhook not found');
export const deliveryNotFound = () => notFound('Delivery not found');
export const urlAlreadyRegistered = () => conflict('URL already registered', 'url_already_registered');
export const webhookLimitReached = (limit: number) => businessRule('Webhook limit reached', 'webhook_limit_reached', { limit });
/** The signed ping got no 2xx. Nothing more is said (status, error class): that would let webhook creation probe hosts and ports. */
export const urlNotReachable = () => businessRule('URL not reachable', 'url_not_reachable');
export const webhookInactive = () => businessRule('Webhook is inactive', 'webhook_inactive');
export const deliveryPending = () => businessRule('Delivery already pending', 'delivery_pending');
