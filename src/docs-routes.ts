// Serves the migration guide that every deprecated-interface response links to.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { MIGRATION_GUIDE } from './legacy/authenticate.js';

/** docs/ beside src/ (development) or dist/ (build, container image). */
const GUIDE_FILE = new URL('../docs/migration.md', import.meta.url);

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  const guide = readFileSync(GUIDE_FILE, 'utf8');
  app.get(MIGRATION_GUIDE, { schema: { tags: ['operations'], summary: 'The migration guide (Markdown)', produces: ['text/markdown'] } }, async (_request, reply) =>
    reply.type('text/markdown; charset=utf-8').send(guide),
  );
}
