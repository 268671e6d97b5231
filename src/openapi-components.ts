// Each shape published once in the OpenAPI document's components.
//
// fastify-type-provider-zod publishes every named zod schema twice, `X` as a response shape and
// `XInput` as a request shape, whether or not they differ (for a plain z.object only in
// `additionalProperties: false`, which zod's output adds). Clients then see two names for one thing.
// Here: unused variants go, an input equal to its output is folded into it, and a request-only shape
// takes the plain name. `XInput` remains only where a shape is both sent and received and differs.
import type { OpenAPIV3_1 } from 'openapi-types';

const PREFIX = '#/components/schemas/';
const INPUT = 'Input';

type Doc = OpenAPIV3_1.Document;

/** Rewrites every `$ref` to a component through `rename` (a name absent from it is kept). */
function renameRefs<T>(value: T, rename: Map<string, string>): T {
  if (rename.size === 0) return value;
  return JSON.parse(JSON.stringify(value), (key, v: unknown) => {
    if (key === '$ref' && typeof v === 'string' && v.startsWith(PREFIX))
      return PREFIX + (rename.get(v.slice(PREFIX.length)) ?? v.slice(PREFIX.length));
    return v;
  }) as T;
}

/** Names of the components the paths reach, directly or through other components. */
function reachable(doc: Doc): Set<string> {
  const schemas = doc.components?.schemas ?? {};
  const seen = new Set<string>();
  const visit = (value: unknown) => {
    for (const match of JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      const name = match[1]!;
      if (seen.has(name)) continue;
      seen.add(name);
      visit(schemas[name]);
    }
  };
  visit(doc.paths);
  return seen;
}

export function publishOnce(input: Doc): Doc {
  let doc = input;
  const schemas = () => doc.components!.schemas!;
  if (doc.components?.schemas === undefined) return doc;

  // 1. Drop what no operation uses (most `XInput` of response shapes, `X` of request shapes).
  const used = reachable(doc);
  for (const name of Object.keys(schemas())) if (!used.has(name)) delete schemas()[name];

  // 2. Fold `XInput` into `X` where they are the same, counting nested pairs already folded as same.
  const folded = new Map<string, string>();
  for (let changed = true; changed;) {
    changed = false;
    for (const name of Object.keys(schemas())) {
      if (!name.endsWith(INPUT) || folded.has(name)) continue;
      const output = name.slice(0, -INPUT.length);
      if (schemas()[output] === undefined) continue;
      if (JSON.stringify(renameRefs(schemas()[name], folded)) === JSON.stringify(schemas()[output])) {
        folded.set(name, output);
        changed = true;
      }
    }
  }
  doc = renameRefs(doc, folded);
  for (const name of folded.keys()) delete schemas()[name];

  // 3. A request-only shape takes the plain name.
  const plain = new Map<string, string>();
  for (const name of Object.keys(schemas())) {
    const output = name.slice(0, -INPUT.length);
    if (name.endsWith(INPUT) && schemas()[output] === undefined) plain.set(name, output);
  }
  doc = renameRefs(doc, plain);
  for (const [from, to] of plain) {
    schemas()[to] = schemas()[from]!;
    delete schemas()[from];
  }
  return doc;
}
