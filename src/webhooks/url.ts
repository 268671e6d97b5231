// What an endpoint's address may be: https, or plain http only to a host the operator allowed
// (WEBHOOK_ALLOW_HTTP_HOSTS, a receiver on a private network, say); never a user or password in it
// (they would be shown wherever the address is), never a fragment (never sent).
import { AppError } from '../errors.js';

const refused = (message: string) =>
  new AppError('validation-failed', `/url: ${message}`, { errors: [{ path: '/url', message }] });

/** The address as the gateway will call it (URL-normalised), or a 422 problem saying what is wrong. */
export function checkEndpointUrl(given: string, allowHttpHosts: readonly string[]): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw refused('is not an absolute URL, e.g. https://hooks.example.com/lead-gateway');
  }
  if (url.protocol === 'http:') {
    if (!allowHttpHosts.includes(url.hostname.toLowerCase()))
      throw refused(
        `must use https: plain http only to a host in WEBHOOK_ALLOW_HTTP_HOSTS (${url.hostname} is not among them)`,
      );
  } else if (url.protocol !== 'https:') throw refused(`must use https, not ${url.protocol.replace(':', '')}`);
  if (url.username !== '' || url.password !== '') throw refused('must not hold a user name or password');
  if (url.hash !== '') throw refused('must not hold a fragment (#...)');
  return url.href;
}
