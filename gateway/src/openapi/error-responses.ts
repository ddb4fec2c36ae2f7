// An error response of the document: its description with every message the
// operation may answer, and an example of the error body for each message.
import { ref, type Json } from './refs.ts';

const STATUS_CODES: Record<number, string> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'DUPLICATE_ENTRY',
  413: 'PAYLOAD_TOO_LARGE',
  429: 'RATE_LIMIT_EXCEEDED',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid parameters or body.',
  401: 'Authentication failed: no key, or a key that is unknown or revoked.',
  403: "The key lacks the operation's scope.",
  404: 'Not found: an unknown id, or one of another team.',
  409: 'A unique value is already taken.',
  413: 'The body exceeds 1 MiB.',
  422: 'A business rule refused the request.',
  429: 'A rate limit was exceeded; retry after Retry-After seconds.',
  500: 'Internal error; nothing internal is said.',
  503: 'A service or store the request needs is down; retry with backoff.',
};

/** `details.reason` where it is not the message in snake_case. */
const REASONS: Record<string, string> = {
  'A request with this Idempotency-Key is in progress': 'idempotency_request_in_progress',
  'Idempotency key reused with different request': 'idempotency_key_reused',
  'Client type cannot be changed': 'client_type_immutable',
  'Delivery already pending': 'delivery_pending',
  'Webhook is inactive': 'webhook_inactive',
};

const snake = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
const exampleName = (s: string) =>
  s
    .replace(/[^A-Za-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .map((w, i) => (i ? w[0].toUpperCase() + w.slice(1) : w.toLowerCase()))
    .join('');

function errorExample(status: number, message: string) {
  const code =
    status === 422 ? (message.startsWith('Duplicate') ? 'DUPLICATE_ENTRY' : 'VALIDATION_ERROR') : STATUS_CODES[status];
  const required = / is required$/.exec(message);
  const unknown = /^Unknown field: (.+)$/.exec(message);
  const details =
    status === 409 || status === 422
      ? { reason: REASONS[message] ?? snake(message) }
      : required
        ? { field: message.slice(0, required.index), type: 'required' }
        : unknown
          ? { field: unknown[1], type: 'unknown' }
          : {};
  return { success: false, error: { code, message, details } };
}

export function errorResponse(status: number, messages: string[], headers: Json) {
  const unique = [...new Set(messages)];
  return {
    description: `${ERROR_DESCRIPTIONS[status]} Messages: ${unique.map((m) => `\`${m}\``).join(', ')}.`,
    headers,
    content: {
      'application/json': {
        schema: ref('Error'),
        examples: Object.fromEntries(
          unique.map((m) => [exampleName(m) || `status${status}`, { summary: m, value: errorExample(status, m) }]),
        ),
      },
    },
  };
}
