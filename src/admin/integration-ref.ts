// Resolving an integration named in an admin path or CLI argument: its id or its handle.
import { AppError } from '../errors.js';
import type { Integration } from '../rules/catalog.js';
import type { RulesHolder } from '../rules/loader.js';

export function integrationByRef(rules: RulesHolder, ref: string): Integration {
  const integration = rules.current().findIntegration(ref);
  if (!integration) {
    const known = [...rules.current().integrations.values()].map((i) => i.handle).join(', ');
    throw new AppError(
      'not-found',
      `No integration "${ref}". Give its id or its workspace:integration handle (known: ${known}).`,
    );
  }
  return integration;
}
