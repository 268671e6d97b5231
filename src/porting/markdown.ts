// The porting guide as Markdown: what the admin API answers for `Accept: text/markdown` or
// `?format=markdown`, and what `lead-gateway porting-guide` prints.
import type { PortingGuide } from './guide.js';
import { escapeControls, terminalText } from '../printable-text.js';
import { templateJson } from './json-template.js';

/**
 * Text a bot chose (the names of members it sent and of tags it created), as literal text: its control
 * characters, bidirectional controls and line separators written as escapes (`\n`, `\u001b`,
 * `\u202e`), then every ASCII punctuation character backslash-escaped, which CommonMark allows for each
 * of them. No link, image, HTML, emphasis or table cell can start in it, whenever it was stored.
 */
const botText = (text: string) => terminalText(escapeControls(text)).replace(/[!-/:-@[-`{-~]/g, (c) => `\\${c}`);

/** The longest run of backticks in `text`: a code span or fence around it is one longer. */
const longestTicks = (text: string) => Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
/** A code span of the text as it is, its delimiter longer than any backtick run inside. */
const code = (text: string) => {
  const ticks = '`'.repeat(longestTicks(text) + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${escapeControls(text)}${pad}${ticks}`;
};
/** A table cell of the gateway's own text: one line, its pipes escaped. */
const cell = (text: string) => text.replace(/\r?\n/g, ' ').replaceAll('|', '\\|');
/** A fenced block, its fence longer than any backtick run inside (at least three). */
const fence = (lang: string, text: string) => {
  const ticks = '`'.repeat(Math.max(3, longestTicks(text) + 1));
  return [ticks + lang, text, ticks].join('\n');
};

export function guideMarkdown(g: PortingGuide): string {
  const out: string[] = [];
  out.push(`# Porting guide: ${g.integration.name} (${g.integration.handle})`, '');
  out.push(`Generated ${g.generated_at} from the calls of the last ${g.window_days} days. State: ${g.state}.`);
  out.push(
    g.fix_by === null
      ? 'Fix by: no sunset date is set for this integration.'
      : `**Fix by ${g.fix_by}**: the deprecated interface stops answering after this date.`,
    '',
  );

  out.push('## The person and the events', '');
  out.push(
    `- \`external_contact_id\`: ${code(g.person_id.v1)}${g.person_id.rule === null ? ' (no legacy person-id rule: use your own stable id of the person)' : ` (the legacy rule ${code(g.person_id.rule)})`}.`,
  );
  out.push(
    `- \`event_id\`: ${code(g.event_id_scheme.lead)} for a lead, ${code(g.event_id_scheme.answers)} for answers. ${g.event_id_scheme.advice}`,
  );
  out.push(`- \`source\`: ${g.source}`);
  for (const r of g.data_rules)
    out.push(`- ${code(`extra_data.${r.extra_data_key}`)} becomes the answer ${code(r.answer)}.`);
  for (const r of g.tag_rules)
    out.push(`- The tag ${code(r.tag)} becomes the answer ${code(r.answer)} = ${code(JSON.stringify(r.value))}.`);
  out.push('');

  out.push('## Routes called', '');
  if (g.routes.length === 0) out.push(`No legacy call in the last ${g.window_days} days.`, '');
  else {
    out.push('| Route | Calls | Last call | Becomes |', '|---|---:|---|---|');
    for (const r of g.routes)
      out.push(
        `| ${cell(r.route)} | ${r.calls_30d} | ${r.last_call ?? '-'} | ${cell(r.replacement ? `${r.replacement.method} ${r.replacement.path}` : r.kind === 'not_needed' ? 'not needed' : 'not available')} |`,
      );
    out.push('');
  }

  for (const r of g.routes.filter((x) => x.kind === 'translated')) {
    out.push(`### ${r.route}`, '', r.advice, '');
    for (const note of r.notes) out.push(`- ${note}`);
    if (r.notes.length > 0) out.push('');
    if (r.sample)
      out.push(
        `A recent call (${r.sample.captured_at}), redacted:`,
        '',
        fence(
          'json',
          templateJson({ method: r.sample.call.method, path: r.sample.call.path, body: r.sample.call.body }, 2),
        ),
        '',
      );
    if (r.v1_example) out.push('The v1 request that replaces it:', '', fence('sh', r.v1_example.curl), '');
  }

  const list = (title: string, items: { route: string; calls_30d: number }[], why: string) => {
    out.push(`## ${title}`, '');
    if (items.length === 0) out.push('None.', '');
    else
      out.push(
        why,
        '',
        ...items.map((i) => `- ${cell(i.route)}: ${i.calls_30d} call${i.calls_30d === 1 ? '' : 's'}`),
        '',
      );
  };
  list(
    'Not needed on v1',
    g.not_needed,
    "The bot stops making these calls: tags and stage come from the integration settings, and the v1 bot reads nothing (boards, statuses, groups, tags, info, leads, a lead, a lead's comments).",
  );
  list(
    'Not available on v1',
    g.not_available,
    'Moving a lead, adding a comment or a payment, and deleting a lead are done in the service by people, not by the bot.',
  );

  out.push('## Ignored legacy fields', '');
  if (g.ignored_legacy_fields.length === 0) out.push('None.', '');
  else
    out.push(
      '| Field | Calls | Last seen | What to do |',
      '|---|---:|---|---|',
      ...g.ignored_legacy_fields.map(
        (f) => `| ${botText(f.field)} | ${f.calls} | ${f.last_seen} | ${cell(f.advice)} |`,
      ),
      '',
    );

  out.push(
    '## Placeholders',
    '',
    ...Object.entries(g.placeholders).map(([p, meaning]) => `- ${code(p)}: ${meaning}`),
    '',
  );
  return out.join('\n');
}

/** Markdown when asked by name, or when Accept names text/markdown and not JSON first; JSON otherwise. */
export function wantsMarkdown(format: 'json' | 'markdown' | undefined, accept: string | undefined): boolean {
  if (format !== undefined) return format === 'markdown';
  const types = (accept ?? '')
    .toLowerCase()
    .split(',')
    .map((t) => t.split(';')[0]!.trim());
  const md = types.indexOf('text/markdown');
  const json = types.indexOf('application/json');
  return md !== -1 && (json === -1 || md < json);
}
