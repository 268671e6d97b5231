// Plain-text tables for people at a terminal (the CLI's --json is for scripts).

export function table(headers: string[], rows: (string | number | null)[][]): string {
  const cells = rows.map((row) => row.map((c) => (c === null ? '-' : String(c))));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (row: string[]) => row.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}
