// The store a test opens beside its gateway: a fresh database in the test's own folder.
import { join } from 'node:path';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';

/** A new store in `dir` (SQLite: the file `name` there), opened as the server opens its own. */
export const openTestStore = (dir: string, name = 'gateway.db'): Store => openStore({ engine: 'sqlite', path: join(dir, name), synchronous: 'FULL' });
