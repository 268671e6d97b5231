// The lead object every interface answers with (docs/api.md, "Response"): every member present, null where there is
// no value; and the integration's id of the person a lead belongs to.
import { z } from 'zod';

const uuid = z.uuid();
const dateTime = z.iso.datetime({ offset: true });

export const ExternalContactIdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .meta({ description: "The integration's permanent id of the person, e.g. telegram:123456" });

export const UserDetailSchema = z
  .object({
    id: uuid,
    username: z.string(),
    first_name: z.string(),
    last_name: z.string().nullable(),
    phone: z.string().nullable(),
    avatar: z.string().nullable(),
    created_at: dateTime.nullable(),
    last_login: dateTime.nullable(),
  })
  .meta({ id: 'UserDetail' });

export const StatusDetailSchema = z
  .object({
    id: uuid,
    name: z.string(),
    color: z.string().nullable(),
    is_default: z.boolean(),
    leads_count: z.number().int(),
    order: z.number().int(),
    created_at: dateTime.nullable(),
  })
  .meta({ id: 'StatusDetail' });

export const GroupDetailSchema = z
  .object({
    id: uuid,
    name: z.string(),
    color: z.string().nullable(),
    leads_count: z.number().int(),
    order: z.number().int(),
    created_at: dateTime.nullable(),
  })
  .meta({ id: 'GroupDetail' });

export const TagObjectSchema = z
  .object({
    id: uuid,
    name: z.string(),
    color: z.string().nullable(),
    is_active: z.boolean(),
    archived_at: dateTime.nullable(),
  })
  .meta({ id: 'Tag' });

export const OptionObjectSchema = z
  .object({
    id: uuid,
    field: uuid,
    label: z.string(),
    color: z.string().nullable(),
    is_active: z.boolean(),
    order: z.number().int(),
    created_at: dateTime.nullable(),
    updated_at: dateTime.nullable(),
  })
  .meta({ id: 'FieldOption' });

export const FileObjectSchema = z
  .object({
    id: uuid,
    original_name: z.string(),
    content_type: z.string(),
    checksum_sha256: z.string(),
    scan_status: z.string(),
    size_bytes: z.number().int(),
    created_at: dateTime,
    attached_at: dateTime.nullable(),
  })
  .meta({ id: 'File' });

export const CustomFieldValueSchema = z
  .object({
    id: uuid,
    field: uuid,
    option: uuid.nullable(),
    file_asset: uuid.nullable(),
    text_value: z.string().nullable(),
    decimal_value: z.string().nullable(),
    boolean_value: z.boolean().nullable(),
    date_value: z.iso.date().nullable(),
    datetime_value: dateTime.nullable(),
    updated_at: dateTime,
    selected_options: z.array(uuid),
    option_detail: OptionObjectSchema.nullable(),
    selected_options_detail: z.array(OptionObjectSchema),
    file_detail: FileObjectSchema.nullable(),
  })
  .meta({ id: 'CustomFieldValue' });

export const LeadObjectSchema = z
  .object({
    id: uuid,
    first_name: z.string(),
    last_name: z.string().nullable(),
    phone: z.string().nullable(),
    email: z.string().nullable().meta({ description: 'Additive member: the e-mail known for the lead' }),
    location: z.string().nullable(),
    position: z.string().nullable(),
    region_code: z.string().nullable(),
    country_code: z.string().nullable(),
    source: z.string().nullable(),
    notes: z.string().nullable(),
    currency: z.string().nullable(),
    gender: z.string().nullable(),
    stage: uuid.nullable(),
    status: uuid.nullable(),
    group: uuid.nullable(),
    team: uuid.nullable(),
    assigned_to: uuid.nullable(),
    created_by: uuid.nullable(),
    closed_by: uuid.nullable(),
    invited_by: uuid.nullable().meta({ description: 'Additive member: the inviting person from the source rules' }),
    assigned_to_detail: UserDetailSchema.nullable(),
    closed_by_detail: UserDetailSchema.nullable(),
    created_by_detail: UserDetailSchema.nullable(),
    status_detail: StatusDetailSchema.nullable(),
    group_detail: GroupDetailSchema.nullable(),
    age: z.number().int().nullable(),
    comments_count: z.number().int(),
    order: z.number().int().nullable(),
    value: z.string().nullable(),
    salary: z.string().nullable(),
    payment_balance: z.string().nullable(),
    total_paid: z.string().nullable(),
    last_payment_at: dateTime.nullable(),
    next_date: z.iso.date().nullable(),
    created_at: dateTime,
    updated_at: dateTime,
    closed_at: dateTime.nullable(),
    active_task_due_at: dateTime.nullable(),
    active_task_status: z.string().nullable(),
    close_outcome: z.string().nullable(),
    close_reason: z.string().nullable(),
    extra_data: z.unknown(),
    tag_ids: z.array(uuid),
    tags: z.array(TagObjectSchema),
    custom_field_values: z.array(CustomFieldValueSchema),
  })
  .meta({ id: 'Lead' });
export type LeadObject = z.infer<typeof LeadObjectSchema>;
