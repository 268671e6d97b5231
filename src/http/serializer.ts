// Response serialization: checked against the route's zod schema, or written as it is.
//
// The zod check (encode, then stringify) cost a fifth of a lead submission's time under load. The
// renderers build every body member by member from the schemas' own types, so production writes them
// as they are; tests and development run `checked`, which also fails a body that carries a member its
// schema does not declare (zod would strip it silently), so drift is caught where it is cheap.
import { ResponseSerializationError } from 'fastify-type-provider-zod';
import { $ZodType, safeEncode } from 'zod/v4/core';
import { canonicalJson } from '../canonical-json.js';

type SerializerCompiler = (route: { schema: unknown; method: string; url: string }) => (data: unknown) => string;

const zodSchemaOf = (schema: unknown): $ZodType | null => {
  if (schema instanceof $ZodType) return schema;
  const properties = (schema as { properties?: unknown } | null)?.properties;
  return properties instanceof $ZodType ? properties : null;
};

export function responseSerializer(checked: boolean): SerializerCompiler {
  return ({ schema, method, url }) => {
    const zod = zodSchemaOf(schema);
    if (!checked || zod === null) return (data) => JSON.stringify(data);
    return (data) => {
      const result = safeEncode(zod, data);
      if (result.error) throw new ResponseSerializationError(method, url, { cause: result.error });
      if (canonicalJson(result.data) !== canonicalJson(data)) {
        throw new Error(`Response of ${method} ${url} carries members its schema does not declare`);
      }
      return JSON.stringify(data);
    };
  };
}
