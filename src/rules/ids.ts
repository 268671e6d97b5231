// Stable catalog ids: UUIDv5 of the workspace and the item's name, the same on every machine and restart.
import { v5 as uuidv5 } from 'uuid';

/** The namespace of every lead-gateway catalog id. Never change it: every stored id depends on it. */
const NAMESPACE = '6f1c3a52-9a7e-4c57-8d0b-2f4e5b1a9c33';

export type CatalogKind =
  'workspace' | 'integration' | 'user' | 'board' | 'stage' | 'status' | 'group' | 'tag' | 'field' | 'option';

/** `parts` are the names leading to the item inside its workspace, e.g. ['Admissions', 'New inquiry']. */
export function stableId(workspace: string, kind: CatalogKind, ...parts: string[]): string {
  return uuidv5(JSON.stringify([workspace, kind, ...parts]), NAMESPACE);
}
