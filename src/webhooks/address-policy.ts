// Which URLs and addresses a webhook may reach: https to public addresses, anything else only where
// the operator allows it, so that an endpoint URL cannot make the gateway call into its own network.
import { BlockList, isIP } from 'node:net';
import { addTo } from '../address-ranges.js';

/**
 * Addresses no endpoint may connect to unless allowed: the gateway's own host and network, cloud
 * metadata services (169.254.169.254 is link-local), and ranges that are not one public host.
 * IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are checked as the IPv4 address they carry.
 */
export const REFUSED_RANGES: readonly string[] = [
  '0.0.0.0/8', // "this network", 0.0.0.0 (unspecified) among them
  '10.0.0.0/8', // private (RFC 1918)
  '100.64.0.0/10', // carrier-grade NAT (RFC 6598)
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, cloud metadata services
  '172.16.0.0/12', // private (RFC 1918)
  '192.0.0.0/24', // IETF protocol assignments
  '192.168.0.0/16', // private (RFC 1918)
  '198.18.0.0/15', // benchmarking
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, 255.255.255.255 (broadcast) among them
  '::/128', // unspecified
  '::1/128', // loopback
  '64:ff9b::/96', // NAT64: an IPv4 address, private or not, behind a translator
  'fc00::/7', // unique local (private)
  'fe80::/10', // link-local
  'fec0::/10', // site-local (deprecated, still routed by some networks)
  'ff00::/8', // multicast
];

/** A URL's host without the brackets of an IPv6 literal, as DNS and the block lists take it. */
export const bareHost = (hostname: string): string => hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();

export interface AddressPolicyOptions {
  /** Hosts (names or addresses, as in the URL) that plain `http` may reach; `https` needs no entry. */
  allowHttpHosts?: readonly string[];
  /** Addresses or CIDR ranges that may be connected to although REFUSED_RANGES holds them. */
  allowAddresses?: readonly string[];
}

export interface AddressPolicy {
  /** Why this URL is refused before any connection, or null when it may be tried. */
  refuseUrl(url: URL): string | null;
  /** Whether a connection to this address (the one resolved, or the socket's peer) is allowed. */
  permits(address: string): boolean;
}

export function addressPolicy(options: AddressPolicyOptions = {}): AddressPolicy {
  const refused = new BlockList();
  for (const range of REFUSED_RANGES) addTo(refused, range);
  const allowed = new BlockList();
  for (const entry of options.allowAddresses ?? []) addTo(allowed, entry);
  const httpHosts = new Set((options.allowHttpHosts ?? []).map(bareHost));

  const permits = (address: string): boolean => {
    const family = isIP(address);
    // Anything that is not a plain address (a zone index such as fe80::1%eth0, garbage) is refused.
    if (family === 0) return false;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    return !refused.check(address, type) || allowed.check(address, type);
  };

  return {
    permits,
    refuseUrl(url) {
      const host = bareHost(url.hostname);
      if (url.protocol === 'http:') {
        if (!httpHosts.has(host)) return `plain http is not allowed to ${host}; use https`;
      } else if (url.protocol !== 'https:') {
        return `the scheme ${url.protocol} is not https`;
      }
      // An address in the URL is checked here, without connecting; a name, on each address it resolves to.
      if (isIP(host) !== 0 && !permits(host)) return `the address ${host} is not allowed`;
      return null;
    },
  };
}
