// A target of the bench's report: a measured figure, its limit, met or not, and by how much it is missed.

export interface Goal {
  name: string;
  /** null: not measured in this run (the row says so rather than passing or failing). */
  value: number | null;
  limit: number;
  /** `min`: the value must reach the limit; `max`: it must stay under it. */
  kind: 'min' | 'max';
}

export const met = (g: Goal): boolean | null =>
  g.value === null ? null : g.kind === 'min' ? g.value >= g.limit : g.value <= g.limit;

/** How far a missed target is from its limit, as a share of the limit ('' when met or not measured). */
export function missedBy(g: Goal): string {
  if (g.value === null || met(g)) return '';
  const off = Math.round(Math.abs(g.value / g.limit - 1) * 100);
  return `${off}% ${g.kind === 'max' ? 'over' : 'under'}`;
}

const metCell = (g: Goal) => ({ true: 'yes', false: '**no**', null: '–' })[String(met(g)) as 'true' | 'false' | 'null'];

/** The targets as a Markdown table; `withMiss` adds the column saying by how much each missed one is off. */
export function targetTable(goals: Goal[], withMiss = false): string[] {
  return [
    `| target | measured | limit | met |${withMiss ? ' missed by |' : ''}`,
    `|---|---:|---:|:---:|${withMiss ? '---:|' : ''}`,
    ...goals.map(
      (g) =>
        `| ${g.name} | ${g.value ?? 'not measured'} | ${g.kind === 'min' ? '≥' : '≤'} ${g.limit} | ${metCell(g)} |${withMiss ? ` ${missedBy(g)} |` : ''}`,
    ),
  ];
}
