// Plain-text tables for people at a terminal (the CLI's --json is for scripts).
import { escapeControls } from '../printable-text.js';

export function table(headers: string[], rows: (string | number | null)[][]): string {
  // A stored value's control characters are shown as escapes (\n, \u001b): a row cannot draw another row
  // or send the terminal a sequence, whoever stored it and whenever.
  const cells = rows.map((row) => row.map((c) => (c === null ? '-' : escapeControls(String(c)))));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}
