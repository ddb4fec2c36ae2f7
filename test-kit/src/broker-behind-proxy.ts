// A Broker reaching the test run's RabbitMQ through a TCP proxy, for tests that cut
// the connection and restore it.
import { Broker, type BrokerOptions } from '@lpm/shared/messaging/broker';
import { proxyInFrontOf } from './proxied-url.ts';
import type { TcpProxy } from './tcp-proxy.ts';
import { quietLogger } from './wait.ts';

export interface BrokerBehindProxy {
  proxy: TcpProxy;
  broker: Broker;
  /** Closes the broker, then the proxy. */
  close(): Promise<void>;
}

/**
 * A proxy in front of AMQP_URL's node, and a Broker on `exchange` connected through
 * it with `options` (a quiet logger unless given).
 */
export async function brokerBehindProxy(
  exchange: string,
  options: Partial<Omit<BrokerOptions, 'url' | 'exchange'>> = {},
): Promise<BrokerBehindProxy> {
  const { proxy, url } = await proxyInFrontOf(process.env.AMQP_URL!, 5672);
  const broker = await Broker.connect({ logger: quietLogger, ...options, exchange, url });
  return {
    proxy,
    broker,
    close: async () => {
      await broker.close();
      await proxy.close();
    },
  };
}
