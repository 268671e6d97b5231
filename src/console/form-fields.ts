// What a console form holds, read by the admin API's own schemas: an action's fields and their refusals.
import type { z } from 'zod';
import { AppError } from '../errors.js';

/** An empty field is a field not filled in. */
export const filled = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === '' ? undefined : value.trim();

/** The admin API's body schema decides what a form may hold: a console refusal says what the API's would. */
export function parsed<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new AppError('validation-failed', `${issue.path.join('.') || 'form'}: ${issue.message}`);
}
