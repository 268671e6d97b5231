// Finding a person's lead and holding it for the unit of work: the read a field write decides on.
import type { Repos } from '../store/store.js';
import type { Lead } from '../store/repos/leads.js';

/**
 * The person's latest lead that is not deleted, locked until the unit ends (`leads.lock`). When the
 * lead read first was deleted before the lock was granted, the next latest one is taken: the unit
 * then decides as if it had run after that delete.
 */
export async function lockLatestLead(tx: Repos, contactId: string): Promise<Lead | null> {
  for (;;) {
    const locked = await tx.leads.lockLatestOfContact(contactId);
    if (locked === null || locked.deletedAt === null) return locked;
  }
}
