// Normalising what identifies a person: phone (docs/api.md: last 9 digits, shown as +998...), e-mail, names.

/** `+998 90 123-45-67`, `998901234567`, `901234567` -> `+998901234567`. Callers validated >= 9 digits. */
export function normalizePhone(raw: string): string {
  return `+998${raw.replace(/\D/g, '').slice(-9)}`;
}

export const normalizeEmail = (raw: string): string => raw.trim().toLowerCase();

/** Names compared for needs_review: case, accents of case and surrounding space do not count. */
export const sameName = (a: string, b: string): boolean =>
  a.trim().toLocaleLowerCase('und') === b.trim().toLocaleLowerCase('und');

/** Trims, and turns an empty or absent text into null. */
export const textOrNull = (value: string | null | undefined): string | null => {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
};
