// The webhooks domain's conditions, each with its fixed message (docs/decisions.md §1, §5).
import { businessRule, conflict, invalidField, notFound } from '@lpm/shared/errors';

export const webhookNotFound = () => notFound('Webhook not found');
export const deliveryNotFound = () => notFound('Delivery not found');
export const urlAlreadyRegistered = () => conflict('URL already registered', 'url_already_registered');
export const webhookLimitReached = (limit: number) =>
  businessRule('Webhook limit reached', 'webhook_limit_reached', { limit });
/** The signed ping got no 2xx. Nothing more is said (status, error class): that would let webhook creation probe hosts and ports. */
export const urlNotReachable = () => businessRule('URL not reachable', 'url_not_reachable');
export const webhookInactive = () => businessRule('Webhook is inactive', 'webhook_inactive');
export const deliveryPending = () => businessRule('Delivery already pending', 'delivery_pending');
export const recoveryNotFound = () => notFound('Recovery not found');
export const recoveryRunning = () => conflict('A recovery is already running for this webhook', 'recovery_running');
export const recoverSinceTooOld = (days: number) => invalidField('since', `since must be within the last ${days} days`);
export const recoverSinceInFuture = () => invalidField('since', 'since must not be in the future');
export const recoverUntilBeforeSince = () => invalidField('until', 'until must be after since');
