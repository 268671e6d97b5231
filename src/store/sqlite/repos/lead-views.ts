// The lead object's parts in SQLite: the repositories' own statements, each a call into the library
// (no round trips to save here).
import type { LeadViewRepo } from '../../repos/lead-views.js';
import type { FieldValueRepo } from '../../repos/field-values.js';
import type { LeadRepo } from '../../repos/leads.js';

export function sqliteLeadViewRepo(leads: LeadRepo, fieldValues: FieldValueRepo): LeadViewRepo {
  const counts: LeadViewRepo['counts'] = async (statusId, groupId) => ({
    statusCount: statusId === null ? 0 : await leads.countByStatus(statusId),
    groupCount: groupId === null ? 0 : await leads.countByGroup(groupId),
  });
  const parts: LeadViewRepo['parts'] = async (leadId, statusId, groupId) => ({
    fieldValues: await fieldValues.listForLead(leadId),
    payments: await leads.payments(leadId),
    tagIds: await leads.tagIds(leadId),
    commentsCount: await leads.commentsCount(leadId),
    ...(await counts(statusId, groupId)),
  });
  return {
    parts,
    counts,
    withLead: async (leadId) => {
      const lead = await leads.get(leadId);
      return lead && { lead, parts: await parts(lead.id, lead.statusId, lead.groupId) };
    },
  };
}
