// A TCP proxy (tcp-proxy.ts) in front of the server a URL names, and the URL that
// reaches that server through it, for outage tests that point a process at the proxy.
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';

export interface ProxiedUrl {
  proxy: TcpProxy;
  /** The URL given, with the proxy's port. */
  url: string;
}

/** `defaultPort`: the server's port when `url` names none (the scheme's own). */
export async function proxyInFrontOf(url: string, defaultPort?: number): Promise<ProxiedUrl> {
  const target = new URL(url);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || defaultPort));
  target.port = String(proxy.port);
  return { proxy, url: target.toString() };
}
