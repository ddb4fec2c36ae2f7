// SSRF protection for webhook URLs (docs/decisions.md §5 Webhooks): https only, to an
// allowed port (443 and 1024-65535 unless WEBHOOK_ALLOWED_PORTS says otherwise), no
// control characters, and the host must not resolve to a loopback, private,
// link-local, CGNAT, multicast, unspecified, documentation or otherwise reserved
// address, IPv4-in-IPv6 spellings included. The lists follow the IANA IPv4 and IPv6
// Special-Purpose Address Registries (RFC 6890 and its updates) and the IPv6
// Address Space registry (everything of ::/8 but the IPv4-embedding forms).
import { promises as dns } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { invalidField } from '@lpm/shared/errors';
import { DEFAULT_ALLOWED_PORTS, parsePortRanges, type PortRange } from '../config.ts';

const BLOCKED_V4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

// ::/8 is refused as a whole in isPublicAddress, except its IPv4-embedding forms
// (mapped, translated, compatible, NAT64), which are judged by the IPv4 address.
const BLOCKED_V6: Array<[string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['100::', 64], // discard-only (RFC 6666)
  ['100:0:0:1::', 64], // dummy prefix (RFC 9780)
  ['2001::', 23],
  ['64:ff9b:1::', 48],
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // SRv6 SIDs (RFC 9602)
];

const blocked = new BlockList();
for (const [net, prefix] of BLOCKED_V4) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of BLOCKED_V6) blocked.addSubnet(net, prefix, 'ipv6');

/** The eight 16-bit groups of an address that isIP() accepted as IPv6. */
function ipv6Groups(ip: string): number[] {
  let s = ip.split('%')[0].toLowerCase();
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a, b, c, d] = tail.split('.').map(Number);
    s = `${s.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groups = (part: string) => (part ? part.split(':').map((h) => parseInt(h, 16)) : []);
  const [head, rest] = s.split('::');
  if (rest === undefined) return groups(head);
  const h = groups(head);
  const r = groups(rest);
  return [...h, ...new Array<number>(8 - h.length - r.length).fill(0), ...r];
}

const dotted = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;

/** The IPv4 address an IPv6 address carries, for the forms that route to it. */
function embeddedIPv4(g: number[]): string | null {
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return dotted(g[6], g[7]); // ::ffff:0:0/96 mapped
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return dotted(g[6], g[7]); // ::ffff:0:0:0/96 translated
  if (zero(0, 6)) return dotted(g[6], g[7]); // ::/96 compatible
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return dotted(g[6], g[7]); // 64:ff9b::/96 NAT64
  if (g[0] === 0x2002) return dotted(g[1], g[2]); // 2002::/16 6to4
  return null;
}

export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return !blocked.check(ip, 'ipv4');
  if (family !== 6) return false;
  const g = ipv6Groups(ip);
  const v4 = embeddedIPv4(g);
  if (v4 !== null && blocked.check(v4, 'ipv4')) return false;
  // The rest of ::/8 (reserved by the IETF, RFC 4291: e.g. 1::ffff:7f00:1, ff::1).
  if (v4 === null && g[0] <= 0xff) return false;
  // Checked in its expanded spelling, which also drops a zone id (fe80::1%eth0).
  return !blocked.check(g.map((x) => x.toString(16)).join(':'), 'ipv6');
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (host) => dns.lookup(host, { all: true, verbatim: true });

const invalidUrl = () => invalidField('url', 'Invalid URL');

/** The host of a URL as an address or a name: IPv6 literals lose their brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

function blockedError(hostname: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`No allowed address for ${hostname}`);
  err.code = 'EADDRBLOCKED';
  return err;
}

/** C0 controls and DEL: the URL parser drops tab, CR and LF silently, so the URL stored would not be the one checked. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

export interface UrlGuardOptions {
  allowPrivate: boolean;
  /** Ports a URL may name (an https URL without one is 443). Default DEFAULT_ALLOWED_PORTS. */
  allowedPorts?: readonly PortRange[];
  resolve?: Resolver;
}

export class UrlGuard {
  private readonly allowPrivate: boolean;
  private readonly allowedPorts: readonly PortRange[];
  private readonly resolve: Resolver;

  constructor(opts: UrlGuardOptions) {
    this.allowPrivate = opts.allowPrivate;
    this.allowedPorts = opts.allowedPorts ?? parsePortRanges(DEFAULT_ALLOWED_PORTS);
    this.resolve = opts.resolve ?? systemResolver;
  }

  /** Whether a connection to this address may be made. */
  allows(ip: string): boolean {
    return this.allowPrivate ? isIP(ip) !== 0 : isPublicAddress(ip);
  }

  /** Whether a URL may name this port. */
  allowsPort(port: number): boolean {
    return this.allowedPorts.some(([from, to]) => port >= from && port <= to);
  }

  parse(url: string): URL {
    if (typeof url !== 'string' || url.length > 2048 || CONTROL_CHARACTER.test(url)) throw invalidUrl();
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidUrl();
    }
    if (parsed.protocol !== 'https:' || !parsed.hostname || parsed.username || parsed.password) throw invalidUrl();
    // A refused port is the same 400 as any other refusal: no probing of which ports of a host answer.
    if (!this.allowsPort(parsed.port === '' ? 443 : Number(parsed.port))) throw invalidUrl();
    return parsed;
  }

  async check(url: string): Promise<{ url: URL; addresses: string[] }> {
    const parsed = this.parse(url);
    const host = hostOf(parsed);
    let addresses: string[];
    if (isIP(host)) {
      addresses = [host];
    } else {
      try {
        addresses = (await this.resolve(host)).map((a) => a.address);
      } catch {
        throw invalidUrl();
      }
    }
    if (addresses.length === 0 || !addresses.every((a) => this.allows(a))) throw invalidUrl();
    return { url: parsed, addresses };
  }

  /**
   * For net.connect / undici `connect.lookup`: resolves at connect time and hands
   * back only allowed addresses, so a connection goes to an address checked at
   * that moment — no window for DNS rebinding between check() and connect.
   * (Node does not call lookup for IP literal hosts: check those with allows().)
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    this.resolve(hostname).then(
      (all) => {
        const allowed = all.filter((a) => this.allows(a.address) && (family === 0 || a.family === family));
        if (allowed.length === 0) callback(blockedError(hostname), options.all ? [] : '');
        else if (options.all) callback(null, allowed);
        else callback(null, allowed[0].address, allowed[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, options.all ? [] : ''),
    );
  };
}
