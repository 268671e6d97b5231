// Serves the migration guide that every deprecated-interface response links to: HTML for browsers,
// Markdown for `Accept: text/markdown`. Only the bot authors' guide is served; the service team's
// runbook (docs/runbook.md) stays in the repository.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import MarkdownIt from 'markdown-it';

/** docs/ beside src/ (development) or dist/ (build, container image). */
/** Where bot authors read how to move; the legacy gate sends it in the Link header of every legacy response. */
export const MIGRATION_GUIDE = '/docs/migration';

const GUIDE_FILE = new URL('../../docs/migration.md', import.meta.url);

/** The page's only style, inline: the page loads nothing from anywhere (no CDN, no script). */
const STYLE = `
body { max-width: 52rem; margin: 2rem auto; padding: 0 1rem; font: 16px/1.55 system-ui, sans-serif; color: #1f2328; }
h1, h2, h3 { line-height: 1.25; margin-top: 1.8em; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9em; }
code { background: #f3f4f6; padding: 0.1em 0.3em; border-radius: 4px; }
pre { background: #f6f8fa; padding: 0.8rem 1rem; overflow-x: auto; border-radius: 6px; }
pre code { background: none; padding: 0; }
table { border-collapse: collapse; margin: 1rem 0; display: block; overflow-x: auto; }
th, td { border: 1px solid #d0d7de; padding: 0.35rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
a { color: #0969da; }
`;

/**
 * The page may apply its one inline style (by hash) and nothing else: no script, image, frame, font or
 * form, and no other site may frame it. A guide rendered from Markdown cannot carry active content
 * anyway (raw HTML is escaped); the policy holds even if that ever changes.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * markdown-it: CommonMark, maintained, and safe by default: `html: false` escapes raw HTML in the
 * source, and its link validator refuses `javascript:`, `vbscript:` and `data:` URLs (except images).
 */
const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });

/** The HTML page of a Markdown guide: its first heading as the title, the inline style, nothing else. */
export function guidePage(source: string): string {
  const title = /^# (.+)$/m.exec(source)?.[1] ?? 'Migration guide';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${markdown.utils.escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${markdown.render(source)}</body>
</html>
`;
}

/** Weight of one media type in an Accept header (RFC 9110 12.5.1): the most specific range wins. */
function weightOf(accept: string, type: string): number {
  const [major] = type.split('/');
  let best = { specificity: -1, q: 0 };
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part
      .trim()
      .toLowerCase()
      .split(';')
      .map((s) => s.trim());
    const specificity = range === type ? 2 : range === `${major}/*` ? 1 : range === '*/*' ? 0 : -1;
    if (specificity <= best.specificity) continue;
    const q = Number(params.find((p) => p.startsWith('q='))?.slice(2) ?? '1');
    best = { specificity, q: Number.isFinite(q) ? q : 0 };
  }
  return best.q;
}

/** Markdown only when the client prefers it to HTML; HTML otherwise (browsers, no Accept header, any type). */
function wantsMarkdown(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (!accept) return false;
  return weightOf(accept, 'text/markdown') > weightOf(accept, 'text/html');
}

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  const guide = readFileSync(GUIDE_FILE, 'utf8');
  const html = guidePage(guide);
  app.get(
    MIGRATION_GUIDE,
    {
      schema: {
        tags: ['operations'],
        summary: 'The migration guide for bot authors (HTML, or Markdown for Accept: text/markdown)',
        produces: ['text/html', 'text/markdown'],
      },
    },
    async (request, reply) => {
      reply.header('vary', 'Accept').header('x-content-type-options', 'nosniff');
      if (wantsMarkdown(request)) return reply.type('text/markdown; charset=utf-8').send(guide);
      return reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', CONTENT_SECURITY_POLICY)
        .send(html);
    },
  );
}
