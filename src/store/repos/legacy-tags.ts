// Tags a legacy bot created with tags/create/, so that later tag_ids naming them can be translated.

export interface LegacyTag {
  workspaceId: string;
  id: string;
  name: string;
  color: string | null;
  createdAt: string;
}

export interface LegacyTagRepo {
  get(workspaceId: string, id: string): Promise<LegacyTag | null>;
  /** Inserts the tag unless one with that id exists; answers the stored one. */
  ensure(tag: LegacyTag): Promise<LegacyTag>;
  list(workspaceId: string): Promise<LegacyTag[]>;
  /** How many tags the workspace's bots created. */
  count(workspaceId: string): Promise<number>;
}
