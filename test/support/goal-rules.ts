// A rules file for the multi-process tests: one workspace whose integrations all map the answer
// `goal` to one text field (keep_existing, the default), each landing leads on Admissions / New.
export function goalRules(workspace: string, integrations: readonly string[]): string {
  const listed = integrations
    .map(
      (slug) =>
        `  - slug: ${slug}\n    name: ${slug}\n    lead_defaults: { board: Admissions, stage: New }\n    answers:\n      goal: { field: goal }\n`,
    )
    .join('');
  return `format_version: 1
workspace:
  slug: ${workspace}
  name: ${workspace} workspace
  boards:
    - name: Admissions
      stages: [New]
  custom_fields:
    goal:
      name: Learning goal
      type: text
integrations:
${listed}`;
}
