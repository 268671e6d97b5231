// The SQLite store: durability pragmas that hold after writes, and group commit with per-unit undo.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { openDatabase } from '../../../src/store/sqlite/connection.js';

let dir: string;
let store: SqliteStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'lead-gateway-store-'));
  store = openSqliteStore({ path: join(dir, 's.db'), synchronous: 'FULL' });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const contact = (id: string) => ({
  id,
  workspaceId: 'w',
  firstName: 'A',
  lastName: null,
  phone: null,
  email: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
});

describe('durability pragmas', () => {
  it('runs WAL with synchronous=FULL and foreign keys, still FULL after a write', async () => {
    await store.transact((tx) => tx.contacts.insert(contact('c1')));
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2);
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(5000);
    // Savepoint and statement journals in memory (2), never a temp file per unit of work.
    expect(store.db.pragma('temp_store', { simple: true })).toBe(2);
  });

  it('a second connection (the CLI) also writes at FULL', () => {
    const other = openDatabase(join(dir, 's.db'), { synchronous: 'FULL' });
    other
      .prepare(
        "INSERT INTO contacts (id, workspace_id, first_name, created_at, updated_at) VALUES ('x', 'w', 'B', 'now', 'now')",
      )
      .run();
    expect(other.pragma('synchronous', { simple: true })).toBe(2);
    other.close();
  });
});

describe('units of work', () => {
  it('commits units that arrive together, and a failing unit undoes only its own writes', async () => {
    const results = await Promise.allSettled([
      store.transact((tx) => tx.contacts.insert(contact('ok-1'))),
      store.transact(async (tx) => {
        await tx.contacts.insert(contact('bad'));
        throw new Error('refused');
      }),
      store.transact((tx) => tx.contacts.insert(contact('ok-2'))),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const ids = (store.db.prepare('SELECT id FROM contacts ORDER BY id').all() as { id: string }[]).map((r) => r.id);
    expect(ids).toEqual(['ok-1', 'ok-2']);
  });

  it('reads and single-statement peeks see only committed data', async () => {
    let seenInside: unknown = 'unset';
    let peekedInside: unknown = 'unset';
    await store.transact(async (tx) => {
      await tx.contacts.insert(contact('pending'));
      seenInside = await store.snapshot((r) => r.contacts.get('pending'));
      peekedInside = await store.readOne((r) => r.contacts.get('pending'));
    });
    expect(seenInside).toBeNull();
    expect(peekedInside).toBeNull();
    expect(await store.snapshot((r) => r.contacts.get('pending'))).toMatchObject({ id: 'pending' });
    expect(await store.readOne((r) => r.contacts.get('pending'))).toMatchObject({ id: 'pending' });
  });

  it('a view (a replay: the lead and its parts, several statements here) reads one snapshot, as a peek would not', async () => {
    const across = (run: typeof store.readCommitted, id: string) =>
      run(async (r) => {
        const before = await r.contacts.get(id);
        // A commit between two statements of the same answer.
        await store.transact((tx) => tx.contacts.insert(contact(id)));
        return [before, await r.contacts.get(id)].map((c) => c?.id ?? null);
      });
    expect(await across(store.readCommitted, 'in-view')).toEqual([null, null]);
    // The same reads as single-statement peeks see the commit in between: why a replay is a view.
    expect(await across(store.readOne, 'in-peeks')).toEqual([null, 'in-peeks']);
  });

  it('a peek inside a read joins its snapshot; outside one it sees every commit', async () => {
    const seen = await store.snapshot(async (r) => {
      await r.contacts.get('any'); // the snapshot begins with the read's first statement
      await store.transact((tx) => tx.contacts.insert(contact('after-read-began')));
      return store.readOne((p) => p.contacts.get('after-read-began'));
    });
    expect(seen).toBeNull();
    expect(await store.readOne((r) => r.contacts.get('after-read-began'))).toMatchObject({ id: 'after-read-began' });
  });

  it('a unit the database refuses fails alone, and the store keeps serving', async () => {
    store.db.exec(
      "CREATE TRIGGER deny BEFORE INSERT ON contacts WHEN NEW.id = 'boom' BEGIN SELECT RAISE(ABORT, 'denied'); END;",
    );
    const results = await Promise.allSettled([
      store.transact((tx) => tx.contacts.insert(contact('a'))),
      store.transact((tx) => tx.contacts.insert(contact('boom'))),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    await store.transact((tx) => tx.contacts.insert(contact('after')));
    expect(await store.snapshot((r) => r.contacts.get('after'))).not.toBeNull();
  });
});
