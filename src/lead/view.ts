// Renders a stored lead as the lead object (docs/api.md, "Response") with its detail objects, from store and catalog.
import type { Repos } from '../store/store.js';
import type { FieldOption, User, Workspace } from '../rules/catalog.js';
import type { FieldValue } from '../store/repos/field-values.js';
import type { Lead } from '../store/repos/leads.js';
import type { LeadObject } from './schemas.js';
import type { LeadViewParts, OwnLeadParts } from '../store/repos/lead-views.js';

const userDetail = (user: User | undefined): LeadObject['assigned_to_detail'] =>
  user
    ? {
        id: user.id,
        username: user.username,
        first_name: user.firstName,
        last_name: user.lastName,
        phone: user.phone,
        avatar: user.avatar,
        created_at: null,
        last_login: null,
      }
    : null;

const optionObject = (o: FieldOption) => ({
  id: o.id,
  field: o.fieldId,
  label: o.label,
  color: o.color,
  is_active: true,
  order: o.order,
  created_at: null,
  updated_at: null,
});

function fieldValueObject(ws: Workspace, v: FieldValue): LeadObject['custom_field_values'][number] {
  const option = v.optionId === null ? undefined : ws.optionsById.get(v.optionId);
  return {
    id: v.id,
    field: v.fieldId,
    option: v.optionId,
    file_asset: null,
    text_value: v.text,
    decimal_value: v.decimal,
    boolean_value: v.bool,
    date_value: v.date,
    datetime_value: v.datetime,
    updated_at: v.updatedAt,
    selected_options: v.optionIds,
    option_detail: option ? optionObject(option) : null,
    selected_options_detail: v.optionIds.flatMap((id) => {
      const o = ws.optionsById.get(id);
      return o ? [optionObject(o)] : [];
    }),
    file_detail: null,
  };
}

/** Hundredths as an exact decimal string with two decimals: 25000050n -> "250000.50". */
export function formatMinor(minor: bigint): string {
  const sign = minor < 0n ? '-' : '';
  const abs = minor < 0n ? -minor : minor;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

const userOf = (ws: Workspace, id: string | null) => (id === null ? undefined : ws.users.get(id));

/**
 * `parts`: the lead's parts as read with it (`leadViews.withLead`), or a lead's own parts as the unit
 * that created it knows them (only the counts are read then); read here when not given.
 */
export async function renderLead(
  r: Repos,
  ws: Workspace,
  lead: Lead,
  parts?: LeadViewParts | OwnLeadParts,
): Promise<LeadObject> {
  const status = lead.statusId === null ? undefined : ws.statuses.get(lead.statusId);
  const group = lead.groupId === null ? undefined : ws.groups.get(lead.groupId);
  // Counted only for a status and a group the catalog knows: an unknown one is shown as none.
  const statusId = status ? status.id : null;
  const groupId = group ? group.id : null;
  const { fieldValues, payments, tagIds, commentsCount, statusCount, groupCount } =
    parts === undefined
      ? await r.leadViews.parts(lead.id, statusId, groupId)
      : 'statusCount' in parts
        ? parts
        : { ...parts, ...(await r.leadViews.counts(statusId, groupId)) };
  return {
    id: lead.id,
    first_name: lead.firstName,
    last_name: lead.lastName,
    phone: lead.phone,
    email: lead.email,
    location: null,
    position: null,
    region_code: null,
    country_code: null,
    source: lead.source,
    notes: lead.notes,
    currency: null,
    gender: null,
    stage: lead.stageId,
    status: lead.statusId,
    group: lead.groupId,
    team: null,
    assigned_to: lead.assignedTo,
    created_by: lead.createdBy,
    closed_by: lead.closedBy,
    invited_by: lead.invitedBy,
    assigned_to_detail: userDetail(userOf(ws, lead.assignedTo)),
    closed_by_detail: userDetail(userOf(ws, lead.closedBy)),
    created_by_detail: userDetail(userOf(ws, lead.createdBy)),
    status_detail: status
      ? {
          id: status.id,
          name: status.name,
          color: status.color,
          is_default: status.isDefault,
          leads_count: statusCount,
          order: status.order,
          created_at: null,
        }
      : null,
    group_detail: group
      ? {
          id: group.id,
          name: group.name,
          color: group.color,
          leads_count: groupCount,
          order: group.order,
          created_at: null,
        }
      : null,
    age: null,
    comments_count: commentsCount,
    order: null,
    value: null,
    salary: null,
    payment_balance: null,
    total_paid: payments.lastAt === null ? null : formatMinor(payments.totalMinor),
    last_payment_at: payments.lastAt,
    next_date: null,
    created_at: lead.createdAt,
    updated_at: lead.updatedAt,
    closed_at: lead.closedAt,
    active_task_due_at: null,
    active_task_status: null,
    close_outcome: lead.closeOutcome,
    close_reason: lead.closeReason,
    extra_data: lead.extraData,
    tag_ids: tagIds,
    tags: tagIds.flatMap((id) => {
      const tag = ws.tags.get(id);
      return tag ? [{ id: tag.id, name: tag.name, color: tag.color, is_active: true, archived_at: null }] : [];
    }),
    custom_field_values: fieldValues.map((v) => fieldValueObject(ws, v)),
  };
}
