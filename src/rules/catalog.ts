// The rules as the code uses them: catalog items with stable ids, indexed by id and by name.
import { brownoutWindows, type Brownout } from './brownouts.js';
import type { FieldType, RulesFile } from './schema.js';
import { stableId } from './ids.js';

export interface User {
  id: string;
  username: string;
  firstName: string;
  lastName: string | null;
  phone: string | null;
  avatar: string | null;
}
export interface Stage {
  id: string;
  name: string;
  boardId: string;
  boardName: string;
  order: number;
}
export interface Status {
  id: string;
  name: string;
  color: string | null;
  isDefault: boolean;
  order: number;
}
export interface Group {
  id: string;
  name: string;
  color: string | null;
  order: number;
}
export interface Tag {
  id: string;
  name: string;
  color: string | null;
}
export interface FieldOption {
  id: string;
  fieldId: string;
  label: string;
  color: string | null;
  order: number;
}
export interface CustomField {
  id: string;
  key: string;
  name: string;
  type: FieldType;
  options: FieldOption[];
}

export interface Workspace {
  id: string;
  slug: string;
  name: string;
  users: Map<string, User>;
  usersByName: Map<string, User>;
  stages: Map<string, Stage>;
  statuses: Map<string, Status>;
  groups: Map<string, Group>;
  tags: Map<string, Tag>;
  fields: Map<string, CustomField>;
  fieldsById: Map<string, CustomField>;
  optionsById: Map<string, FieldOption>;
}

export interface SourceRule {
  /** Tests a metadata.source_key: exact for `key`, anchored glob for `match`. */
  test: (sourceKey: string) => boolean;
  source: string;
  invitedBy: string | null;
}

export type ConflictPolicy = 'keep_existing' | 'integration_wins';

export interface AnswerMapping {
  field: CustomField;
  /** Lower-cased incoming value -> option label or boolean. */
  values: Map<string, string | boolean>;
  policy: ConflictPolicy;
}

export interface Integration {
  id: string;
  slug: string;
  /** `workspace-slug:integration-slug`, the handle the admin API and CLI accept. */
  handle: string;
  name: string;
  workspace: Workspace;
  defaults: {
    stageId: string;
    statusId: string | null;
    groupId: string | null;
    assignedTo: string | null;
    tagIds: string[];
  };
  sources: SourceRule[];
  answers: Map<string, AnswerMapping>;
  /** Requests per minute per key; null: the configured default. */
  rateLimitPerMinute: number | null;
  legacy: {
    /** Template of the person id of a legacy lead, or null when none is configured. */
    externalContactId: string | null;
    sunset: string | null;
    /** Its brownout windows (its own, else the workspace's), in the order they start. */
    brownouts: Brownout[];
    /** The workspace opted in: `sunset` is its scheduled switch-off (src/migration/schedule.ts). */
    switchOffAtSunset: boolean;
    tags: Map<string, { answer: string; value: string | boolean | number }>;
    data: Map<string, string>;
  };
}

export interface Rules {
  workspaces: Map<string, Workspace>;
  integrations: Map<string, Integration>;
  /** By id and by handle. */
  findIntegration(ref: string): Integration | undefined;
}

const globToRegExp = (glob: string): RegExp =>
  new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replaceAll('*', '.*')
      .replaceAll('?', '.')}$`,
    's',
  );

function buildWorkspace(file: RulesFile): Workspace {
  const ws = file.workspace;
  const id = (kind: Parameters<typeof stableId>[1], ...parts: string[]) => stableId(ws.slug, kind, ...parts);
  const users = ws.users.map<User>((u) => ({
    id: id('user', u.username),
    username: u.username,
    firstName: u.first_name,
    lastName: u.last_name ?? null,
    phone: u.phone ?? null,
    avatar: u.avatar ?? null,
  }));
  const stages = ws.boards.flatMap((b) =>
    b.stages.map<Stage>((s, order) => ({
      id: id('stage', b.name, s),
      name: s,
      boardId: id('board', b.name),
      boardName: b.name,
      order,
    })),
  );
  const fields = Object.entries(ws.custom_fields).map<CustomField>(([key, f]) => {
    const fieldId = id('field', key);
    return {
      id: fieldId,
      key,
      name: f.name,
      type: f.type,
      options: (f.options ?? []).map((o, order) => ({
        id: id('option', key, o.label),
        fieldId,
        label: o.label,
        color: o.color ?? null,
        order,
      })),
    };
  });
  return {
    id: stableId(ws.slug, 'workspace'),
    slug: ws.slug,
    name: ws.name,
    users: new Map(users.map((u) => [u.id, u])),
    usersByName: new Map(users.map((u) => [u.username, u])),
    stages: new Map(stages.map((s) => [s.id, s])),
    statuses: new Map(
      ws.statuses.map((s, order) => [
        id('status', s.name),
        { id: id('status', s.name), name: s.name, color: s.color ?? null, isDefault: s.is_default, order },
      ]),
    ),
    groups: new Map(
      ws.groups.map((g, order) => [
        id('group', g.name),
        { id: id('group', g.name), name: g.name, color: g.color ?? null, order },
      ]),
    ),
    tags: new Map(
      ws.tags.map((t) => [id('tag', t.name), { id: id('tag', t.name), name: t.name, color: t.color ?? null }]),
    ),
    fields: new Map(fields.map((f) => [f.key, f])),
    fieldsById: new Map(fields.map((f) => [f.id, f])),
    optionsById: new Map(fields.flatMap((f) => f.options.map((o) => [o.id, o] as const))),
  };
}

/** Builds the indexed rules from validated files (references were checked by the schema). */
export function buildRules(files: RulesFile[]): Rules {
  const workspaces = new Map<string, Workspace>();
  const integrations = new Map<string, Integration>();
  const byHandle = new Map<string, Integration>();
  for (const file of files) {
    const workspace = buildWorkspace(file);
    workspaces.set(workspace.id, workspace);
    const wsId = (kind: Parameters<typeof stableId>[1], ...parts: string[]) => stableId(workspace.slug, kind, ...parts);
    for (const i of file.integrations) {
      const d = i.lead_defaults;
      const integration: Integration = {
        id: wsId('integration', i.slug),
        slug: i.slug,
        handle: `${workspace.slug}:${i.slug}`,
        name: i.name,
        workspace,
        defaults: {
          stageId: wsId('stage', d.board, d.stage),
          statusId: d.status === undefined ? null : wsId('status', d.status),
          groupId: d.group === undefined ? null : wsId('group', d.group),
          assignedTo: d.assigned_to === undefined ? null : wsId('user', d.assigned_to),
          tagIds: d.tags.map((t) => wsId('tag', t)),
        },
        sources: i.sources.map((rule) => {
          const pattern = rule.match === undefined ? null : globToRegExp(rule.match);
          return {
            test: pattern ? (key: string) => pattern.test(key) : (key: string) => key === rule.key,
            source: rule.source,
            invitedBy: rule.invited_by === undefined ? null : wsId('user', rule.invited_by),
          };
        }),
        answers: new Map(),
        rateLimitPerMinute: i.rate_limit_per_minute ?? null,
        legacy: {
          externalContactId: i.legacy.external_contact_id ?? null,
          sunset: i.legacy.sunset ?? null,
          brownouts: brownoutWindows(i.legacy.brownouts ?? file.workspace.legacy.brownouts),
          switchOffAtSunset: file.workspace.legacy.switch_off_at_sunset,
          tags: new Map(Object.entries(i.legacy.tags)),
          data: new Map(Object.entries(i.legacy.data)),
        },
      };
      for (const [key, m] of Object.entries(i.answers)) {
        integration.answers.set(key, {
          field: workspace.fields.get(m.field)!,
          values: new Map(Object.entries(m.values ?? {}).map(([incoming, target]) => [incoming.toLowerCase(), target])),
          policy: m.policy,
        });
      }
      integrations.set(integration.id, integration);
      byHandle.set(integration.handle, integration);
    }
  }
  return {
    workspaces,
    integrations,
    findIntegration: (ref) => integrations.get(ref) ?? byHandle.get(ref),
  };
}
