// The queues of a consumer and their depths: the shapes the consumers, the broker
// and the queue metrics share, apart so that none of them imports another for a type.

export interface QueueOfConsumer {
  /** The consumer's queue. */
  queue: string;
  kind: 'main' | 'retry' | 'delay' | 'dlq';
  /** The queue's own name (`<queue>.dlq`, ...). */
  name: string;
}

/** A queue's messages and consumers as the broker counts them. */
export interface QueueDepth extends QueueOfConsumer {
  messages: number;
  consumers: number;
}
