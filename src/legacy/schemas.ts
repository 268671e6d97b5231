// Shapes of the deprecated bot interface as legacy bots send them (documented in docs/legacy-api.md).
import { z } from 'zod';
import type { PageKey } from '../store/repos/lead-pages.js';
import { COMMENT_TEXT_MAX } from '../lead/comments.js';
import { GroupDetailSchema, LeadObjectSchema, StatusDetailSchema } from '../lead/schemas.js';
import { CONTROL_CHARACTER_MESSAGE, hasControlCharacter } from '../printable-text.js';

// The lead bodies are also what the translation onto v1 reads, so they live beside it in src/porting/.
export {
  LEGACY_ITEMS_MAX,
  LEGACY_WRITE_COUNTED,
  LegacyLeadCreateSchema,
  LegacyLeadUpdateSchema,
  type LegacyLeadCreate,
  type LegacyLeadUpdate,
} from '../porting/legacy-lead.js';

export const legacyMeta = { tags: ['legacy (deprecated)'], deprecated: true, security: [{ legacyBotKey: [] }] };

/**
 * The largest legacy lead creation: names, phone, e-mail and `source` (under 1,500 bytes), `notes`
 * of 10,000 characters at 3 bytes each (30,000), 200 tag ids of 100 characters (20,600) and 200
 * `extra_data` keys of a 255-character key and a 255-byte value (103,200): 155,300 bytes, within
 * 160 KiB. Past it: 413, the body unread.
 */
export const LEGACY_CREATE_BODY_LIMIT_BYTES = 160 * 1_024;
/** The largest legacy lead update: its tag ids and `extra_data` as above (123,800 bytes), within 128 KiB. */
export const LEGACY_UPDATE_BODY_LIMIT_BYTES = 128 * 1_024;
/**
 * The legacy writes of one small object (a comment, a payment, a move, a tag): a comment's 10,000
 * characters at 3 bytes each (30,000) are the largest, and an unchanged bot may send members the
 * gateway ignores beside them; 64 KiB holds both. Past it: 413, the body unread.
 */
export const LEGACY_SMALL_WRITE_BODY_LIMIT_BYTES = 64 * 1_024;
/** Values in one legacy lead write: the tag ids and `extra_data` keys (400), their values, and members the gateway ignores. */
export const LEGACY_WRITE_MAX_VALUES = 4_096;

export const LegacyLeadParamsSchema = z.object({ id: z.string().min(1) });

/**
 * A tag's name is shown wherever tags are listed (GET tags/, the porting guide, the CLI): printable text,
 * as every name a person reads back (src/printable-text.ts). Trimmed first, so a name sent with a
 * trailing line break, as unchanged bots may, is still the name.
 */
export const LegacyTagCreateSchema = z
  .looseObject({
    name: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .refine((name) => !hasControlCharacter(name), { message: CONTROL_CHARACTER_MESSAGE }),
    color: z.string().max(32).nullish(),
  })
  .meta({ id: 'LegacyTagCreate' });

export const LegacyTagSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    color: z.string().nullable(),
    is_active: z.boolean(),
    archived_at: z.string().nullable(),
  })
  .meta({ id: 'LegacyTag' });

/** `page=` reaches at most this many leads deep; the `next` link (a cursor) reaches any depth. */
export const LEGACY_PAGE_DEPTH_MAX = 10_000;

/** A page boundary as an opaque token: the created_at and id of the lead it follows or precedes. */
export const encodeCursor = (key: PageKey): string => Buffer.from(`${key.createdAt} ${key.id}`).toString('base64url');

const CursorSchema = z
  .string()
  .max(200)
  .transform((text, ctx): PageKey => {
    const [createdAt, id, ...rest] = Buffer.from(text, 'base64url').toString('utf8').split(' ');
    if (
      createdAt === undefined ||
      id === undefined ||
      rest.length > 0 ||
      Number.isNaN(Date.parse(createdAt)) ||
      !/^[0-9a-f-]{36}$/.test(id)
    ) {
      ctx.addIssue({
        code: 'custom',
        message: 'is not a cursor of this list; follow the next or previous link as given',
      });
      return z.NEVER;
    }
    return { createdAt, id };
  })
  .optional();

export const LegacyPageQuerySchema = z
  .object({
    page: z.coerce.number().int().min(1).default(1),
    page_size: z.coerce.number().int().min(1).max(100).default(20),
    after: CursorSchema.meta({ description: 'Cursor from a next link: the page after that lead' }),
    before: CursorSchema.meta({ description: 'Cursor from a previous link: the page before that lead' }),
  })
  .superRefine((q, ctx) => {
    if (q.after !== undefined && q.before !== undefined)
      ctx.addIssue({ code: 'custom', path: ['before'], message: 'give after or before, not both' });
    if (q.after === undefined && q.before === undefined && q.page * q.page_size > LEGACY_PAGE_DEPTH_MAX) {
      ctx.addIssue({
        code: 'custom',
        path: ['page'],
        message: `page × page_size must be at most ${LEGACY_PAGE_DEPTH_MAX}; to read further, follow the next link of the previous page (a cursor)`,
      });
    }
  });

export type LegacyPageQuery = z.infer<typeof LegacyPageQuerySchema>;

/**
 * `page=` or `page_size=` on a list that is otherwise one plain array (comments, tags): the bot asks for
 * a page, and gets DRF's page-number shape. Without either, the plain array it always had.
 */
export const LegacyListPageQuerySchema = z.object({
  page: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .meta({ description: 'Asks for a page (from 1) instead of the whole list' }),
  page_size: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .meta({ description: 'Items a page, at most 100 (20 when not given)' }),
});
export type LegacyListPageQuery = z.infer<typeof LegacyListPageQuerySchema>;

/** Items a page of comments or tags when the bot gives no `page_size=`, as `GET leads/`. */
export const LEGACY_LIST_PAGE_SIZE = 20;

export const LegacyMoveSchema = z
  .looseObject({ stage: z.uuid('must be a stage id (uuid)') })
  .meta({ id: 'LegacyMove' });
export const LegacyCommentSchema = z
  .looseObject({ text: z.string().trim().min(1).max(COMMENT_TEXT_MAX) })
  .meta({ id: 'LegacyComment' });
export const LegacyPaymentSchema = z
  .looseObject({ amount: z.union([z.string(), z.number()]), comment: z.string().max(1000).nullish() })
  .meta({ id: 'LegacyPayment' });

// --- Answers of the reads and actions served from the gateway's store ---

export const LegacyBoardSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    stages: z.array(z.object({ id: z.uuid(), name: z.string(), order: z.number().int() })),
  })
  .meta({ id: 'LegacyBoard' });

export const LegacyInfoSchema = z
  .object({
    integration: z.object({ id: z.uuid(), name: z.string() }),
    workspace: z.object({ id: z.uuid(), name: z.string() }),
    deprecated: z.literal(true),
    state: z.enum(['legacy', 'migrating', 'switched_off']),
    sunset: z.string().nullable(),
  })
  .meta({ id: 'LegacyInfo' });

export const LegacyLeadPageSchema = z
  .object({
    count: z.number().int(),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(LeadObjectSchema),
  })
  .meta({ id: 'LegacyLeadPage' });

export const LegacyCommentObjectSchema = z
  .object({ id: z.uuid(), lead: z.uuid(), text: z.string(), created_at: z.string() })
  .meta({ id: 'LegacyCommentObject' });

const pageOf = <T extends z.ZodType>(item: T, id: string) =>
  z
    .object({
      count: z.number().int(),
      next: z.string().nullable(),
      previous: z.string().nullable(),
      results: z.array(item),
    })
    .meta({ id });

/** `GET leads/{id}/comments/`: the plain array, or a page when the bot asks for one. */
export const LegacyCommentListSchema = z.union([
  z.array(LegacyCommentObjectSchema),
  pageOf(LegacyCommentObjectSchema, 'LegacyCommentPage'),
]);

/** `GET tags/`: the plain array, or a page when the bot asks for one. */
export const LegacyTagListSchema = z.union([z.array(LegacyTagSchema), pageOf(LegacyTagSchema, 'LegacyTagPage')]);

export const LegacyPaymentObjectSchema = z
  .object({ id: z.uuid(), lead: z.uuid(), amount: z.string(), comment: z.string().nullable(), created_at: z.string() })
  .meta({ id: 'LegacyPaymentObject' });

export { GroupDetailSchema as LegacyGroupSchema, StatusDetailSchema as LegacyStatusSchema };
