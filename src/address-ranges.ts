// Addresses and CIDR ranges as the settings take them (WEBHOOK_ALLOW_ADDRESSES) and the webhooks'
// address policy checks them: read once here, below the configuration that validates them.
import { BlockList, isIP } from 'node:net';

/** An address, or a CIDR range (`10.1.0.0/16`, `fd00::/8`), added to a block list; throws if neither. */
export function addTo(list: BlockList, entry: string): void {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  const bits = prefix === undefined ? undefined : Number(prefix);
  const max = family === 4 ? 32 : 128;
  if (
    family === 0 ||
    rest.length > 0 ||
    (bits !== undefined && !(Number.isInteger(bits) && bits >= 0 && bits <= max))
  ) {
    throw new RangeError(`not an IP address or CIDR range: ${JSON.stringify(entry)}`);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (bits === undefined) list.addAddress(address, type);
  else list.addSubnet(address, bits, type);
}

/** Whether `entry` is an address or a CIDR range, as WEBHOOK_ALLOW_ADDRESSES takes them. */
export function isAddressOrRange(entry: string): boolean {
  try {
    addTo(new BlockList(), entry);
    return true;
  } catch {
    return false;
  }
}
