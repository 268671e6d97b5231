// A legacy lead as the bots send it, the bodies of POST leads/ and PATCH leads/:id/ (docs/legacy-api.md):
// what the legacy interface parses and what the translation onto v1 reads, the porting guide's examples too.
import { z } from 'zod';
import { ANSWERS_MAX } from '../answers/schemas.js';
import { COMMENT_TEXT_MAX } from '../lead/comments.js';

/** Tags or data keys one legacy write may carry: each may become an answer (intake ANSWERS_MAX). */
export const LEGACY_ITEMS_MAX = ANSWERS_MAX;

/** `tag_ids` and `extra_data` counted while the body is scanned, before it is parsed (json-body.ts), with the schema's own messages. */
const TAG_IDS_COUNTED = {
  member: 'tag_ids',
  max: LEGACY_ITEMS_MAX,
  message: `must hold at most ${LEGACY_ITEMS_MAX} tag ids`,
} as const;
const EXTRA_DATA_COUNTED = {
  member: 'extra_data',
  max: LEGACY_ITEMS_MAX,
  message: `must hold at most ${LEGACY_ITEMS_MAX} keys`,
} as const;
export const LEGACY_WRITE_COUNTED = [TAG_IDS_COUNTED, EXTRA_DATA_COUNTED] as const;

const legacyTagIds = (description: string) =>
  z.array(z.string().max(100)).max(LEGACY_ITEMS_MAX, TAG_IDS_COUNTED.message).nullish().meta({ description });
const legacyData = (description: string) =>
  z
    .record(z.string(), z.unknown())
    .superRefine((value, ctx) => {
      if (Object.keys(value).length > LEGACY_ITEMS_MAX)
        ctx.addIssue({ code: 'custom', message: EXTRA_DATA_COUNTED.message });
    })
    .nullish()
    .meta({ description, maxProperties: LEGACY_ITEMS_MAX });

/**
 * Lenient on purpose: unchanged bots send what they always sent. Known members are checked for type;
 * members the gateway does not translate are accepted, ignored and counted in the migration report.
 */
export const LegacyLeadCreateSchema = z
  .looseObject({
    first_name: z.string().max(150),
    last_name: z.string().max(150).nullish(),
    phone: z.string().max(32).nullish(),
    email: z.string().max(254).nullish(),
    notes: z.string().max(COMMENT_TEXT_MAX).nullish(),
    source: z.string().max(255).nullish().meta({ description: 'Becomes metadata.source_key' }),
    tag_ids: legacyTagIds('Translated into answers by the tag rules'),
    extra_data: legacyData('Becomes metadata; keys with a data rule become answers'),
    stage: z.unknown().optional().meta({ description: 'Ignored: the integration settings decide' }),
    status: z.unknown().optional(),
    group: z.unknown().optional(),
    assigned_to: z.unknown().optional(),
  })
  .meta({ id: 'LegacyLeadCreate' });
export type LegacyLeadCreate = z.infer<typeof LegacyLeadCreateSchema>;

export const LegacyLeadUpdateSchema = z
  .looseObject({
    tag_ids: legacyTagIds('Tags added here become answers by the tag rules'),
    extra_data: legacyData('Keys with a data rule become answers'),
  })
  .meta({ id: 'LegacyLeadUpdate' });
export type LegacyLeadUpdate = z.infer<typeof LegacyLeadUpdateSchema>;
