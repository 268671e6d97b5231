// The shell commands of the docs' fenced `sh`/`bash` blocks, split as bash splits them, with what the
// doc says each one answers: a `# answers 201` comment on the command, or a JSON block right after.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

/** The Markdown files under a folder of the repository, its subfolders included, sorted. */
function markdownUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory()
        ? markdownUnder(`${folder}/${entry.name}`)
        : entry.name.endsWith('.md')
          ? [`${folder}/${entry.name}`]
          : [],
    )
    .sort();
}

/** The README and every Markdown file under docs/ (docs/operations/ too), relative to the root. */
export const DOC_FILES: readonly string[] = ['README.md', ...markdownUnder('docs')];

export interface DocCommand {
  file: string;
  /** Line of the command's first character in the file (1-based). */
  line: number;
  /** The command as bash reads it: line continuations joined, comments dropped. */
  text: string;
  /** `curl`, `npm run cli -- …`, `npx <a devDependency's bin>`, or anything else (not run). */
  kind: 'curl' | 'cli' | 'npx' | 'other';
  /** From a `# answers NNN` comment on the command. */
  expectedStatus: number | null;
  /** A JSON block that follows the command's block: the answer the doc shows (`"…"` is any value). */
  expectedBody: unknown;
}

interface Block {
  lang: string;
  body: string;
  /** Line of the block's first body line. */
  line: number;
  /** Line of its closing fence. */
  endLine: number;
  /** A heading stands between this block and the one before. */
  afterHeading: boolean;
}

/** Fenced blocks, also inside list items (indented fences). */
export function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  let heading = false;
  for (let i = 0; i < lines.length; i++) {
    if (/^#{1,6} /.test(lines[i]!)) heading = true;
    const open = /^(\s*)(`{3,})(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent = '', fence = '', lang = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !new RegExp(`^\\s*${fence}\\s*$`).test(lines[j]!); j++)
      body.push(lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!);
    blocks.push({ lang, body: body.join('\n'), line: i + 2, endLine: j + 1, afterHeading: heading });
    heading = false;
    i = j;
  }
  return blocks;
}

/**
 * Splits a block into commands the way bash does for the cases the docs use: quotes may span lines,
 * a backslash before a newline continues the line, `#` after white space starts a comment.
 */
export function splitCommands(body: string, firstLine: number): { text: string; comment: string; line: number }[] {
  const commands: { text: string; comment: string; line: number }[] = [];
  let text = '';
  let comment = '';
  let line = firstLine;
  let start = firstLine;
  let quote: "'" | '"' | null = null;
  const end = () => {
    if (text.trim() !== '') commands.push({ text: text.trim(), comment: comment.trim(), line: start });
    text = '';
    comment = '';
  };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (text.trim() === '' && c !== '\n') start = line;
    if (c === '\n') line++;
    if (quote === "'") {
      text += c;
      if (c === "'") quote = null;
    } else if (c === '\\' && body[i + 1] === '\n') {
      i++;
      line++;
      text += ' ';
    } else if (c === '\\') {
      text += c + (body[i + 1] ?? '');
      i++;
    } else if (quote === '"') {
      text += c;
      if (c === '"') quote = null;
    } else if (c === "'" || c === '"') {
      text += c;
      quote = c;
    } else if (c === '#' && (text === '' || /\s$/.test(text))) {
      const stop = body.indexOf('\n', i);
      comment += ` ${body.slice(i + 1, stop === -1 ? body.length : stop)}`;
      i = (stop === -1 ? body.length : stop) - 1;
    } else if (c === '\n') {
      end();
    } else {
      text += c;
    }
  }
  if (quote) throw new Error(`unterminated ${quote} quote in the block at line ${firstLine}`);
  end();
  return commands;
}

/** How far below a command's block a JSON block may start and still be the answer it shows. */
const NEARBY_LINES = 10;

function kindOf(text: string): DocCommand['kind'] {
  if (/^curl\s/.test(text)) return 'curl';
  // A secret the CLI reads from stdin is piped in from a variable, as the docs show it.
  if (/^(printf '%s\\n' "\$\w+" \| )?npm run cli --(\s|$)/.test(text)) return 'cli';
  if (/^npx\s/.test(text)) return 'npx';
  return 'other';
}

/** Every command of one Markdown file (path relative to the repository root), in document order. */
export function commandsOf(file: string): DocCommand[] {
  const blocks = fencedBlocks(readFileSync(join(ROOT, file), 'utf8'));
  const commands: DocCommand[] = [];
  blocks.forEach((block, index) => {
    if (block.lang !== 'sh' && block.lang !== 'bash') return;
    const next = blocks[index + 1];
    let expectedBody: unknown = null;
    // Only an answer shown close by, in the same section, belongs to the command.
    if (next?.lang === 'json' && !next.afterHeading && next.line - block.endLine <= NEARBY_LINES) {
      try {
        expectedBody = JSON.parse(next.body);
      } catch {
        // A shape with elisions ({ … }), not an answer to compare.
      }
    }
    const split = splitCommands(block.body, block.line);
    split.forEach((c, i) => {
      const status = /\banswers (\d{3})\b/.exec(c.comment);
      commands.push({
        file,
        line: c.line,
        text: c.text,
        kind: kindOf(c.text),
        expectedStatus: status ? Number(status[1]) : null,
        // The shown answer belongs to the block's last command.
        expectedBody: i === split.length - 1 ? expectedBody : null,
      });
    });
  });
  return commands;
}

/** Where `actual` differs from what the doc shows; `"…"` in the doc stands for any value. */
export function differences(actual: unknown, shown: unknown, path = ''): string[] {
  if (shown === '…') return [];
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual) || actual.length !== shown.length)
      return [`${path || '/'}: shown ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`];
    return shown.flatMap((s, i) => differences(actual[i], s, `${path}/${i}`));
  }
  if (shown !== null && typeof shown === 'object') {
    if (actual === null || typeof actual !== 'object')
      return [`${path || '/'}: shown an object, got ${JSON.stringify(actual)}`];
    return Object.entries(shown).flatMap(([k, s]) =>
      differences((actual as Record<string, unknown>)[k], s, `${path}/${k}`),
    );
  }
  return Object.is(actual, shown)
    ? []
    : [`${path || '/'}: shown ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`];
}
