export {
  createClient,
  type Answer,
  type Args,
  type ClientOptions,
  type ListOperationId,
  type LpmClient,
  type OperationId,
} from './client.ts';
export { LpmError } from './errors.ts';
export { verifyWebhook, WebhookVerificationError, type VerifyOptions, type WebhookEvent } from './webhooks.ts';
export type { components, operations, paths, webhooks } from './schema.d.ts';
