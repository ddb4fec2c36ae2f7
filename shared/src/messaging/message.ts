// The body of every message on the broker: JSON with at least an `id` (the AMQP
// messageId, the dedupe key) and a `type`. Domain events are such messages, and so
// are work-queue jobs; the consumer core only needs these two fields, and a parse
// per kind turns a body into the kind's type or throws (the message is dead-lettered).
import type { DomainEvent } from '../events.ts';

export interface Message {
  id: string;
  type: string;
}

/** A message to publish: `created_at` (ISO 8601) becomes the AMQP timestamp. */
export interface OutgoingMessage extends Message {
  created_at: string;
}

/** The properties of a delivery that are read or carried over to a republish; amqplib types them all as any. */
export interface CarriedProperties {
  contentType?: string;
  type?: string;
  messageId?: string;
  timestamp?: number;
}

/** Turns a parsed JSON body into a message of one kind; throws when it is not one. */
export type ParseMessage<M extends Message> = (body: unknown) => M;

export function readJson(content: Buffer): unknown {
  try {
    return JSON.parse(content.toString('utf8'));
  } catch (err) {
    throw new Error('message body is not valid JSON', { cause: err });
  }
}

export function isMessage(v: unknown): v is Message {
  if (!v || typeof v !== 'object') return false;
  const m = v as Partial<Record<keyof Message, unknown>>;
  return typeof m.id === 'string' && typeof m.type === 'string';
}

export const parseEvent: ParseMessage<DomainEvent> = (body) => {
  if (!isMessage(body)) throw new Error('message body is not a domain event (id and type required)');
  return body as DomainEvent;
};
