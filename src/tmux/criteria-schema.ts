import { ENTITY_FIELDS } from './catalog.js';
import { COMPARISON_OPS, CRITERIA_LIMITS, CRITERIA_VERSION, NULL_OPS, QUANTIFIERS, RELATIONS, TEXT_OPS, type CriteriaEntity } from './criteria.js';

/** A JSON Schema document, as plain JSON values. */
export type JsonSchema = { readonly [key: string]: JsonSchemaValue };
type JsonSchemaValue = string | number | boolean | null | JsonSchema | readonly JsonSchemaValue[];

const ENTITIES = Object.keys(RELATIONS) as CriteriaEntity[];

function exprRef(entity: CriteriaEntity): JsonSchema {
  return { $ref: `#/$defs/${entity}Expr` };
}

function only(key: string, value: JsonSchema): JsonSchema {
  return { type: 'object', additionalProperties: false, required: [key], properties: { [key]: value } };
}

function expression(entity: CriteriaEntity): JsonSchema {
  const fields = Object.values(ENTITY_FIELDS[entity]).map((spec) => spec.wire);
  const self = exprRef(entity);
  const branches: JsonSchema[] = [
    only('and', { type: 'array', minItems: 1, items: self }),
    only('or', { type: 'array', minItems: 1, items: self }),
    only('not', self),
    {
      type: 'object',
      additionalProperties: false,
      required: ['field', 'op', 'value'],
      properties: {
        field: { enum: fields },
        op: { enum: [...COMPARISON_OPS, ...TEXT_OPS] },
        value: { type: ['string', 'integer', 'boolean'], maxLength: CRITERIA_LIMITS.maxStringBytes },
        caseInsensitive: { type: 'boolean' },
      },
    },
    { type: 'object', additionalProperties: false, required: ['field', 'op'], properties: { field: { enum: fields }, op: { enum: [...NULL_OPS] } } },
  ];
  const relations = Object.entries(RELATIONS[entity]);
  if (relations.length > 0) {
    const clause: JsonSchema = {
      oneOf: relations.map(([relation, target]) => ({
        type: 'object',
        additionalProperties: false,
        required: ['relation', 'where'],
        properties: { relation: { const: relation }, where: exprRef(target) },
      })),
    };
    for (const quantifier of QUANTIFIERS) branches.push(only(quantifier, clause));
  }
  return { oneOf: branches };
}

/**
 * The JSON Schema of criteria's versioned wire form, built from the same catalog and
 * operator lists the validator uses. It checks shape (keys, entities, fields, operators,
 * relations); drover's validator also checks that a value's type suits its field, and the
 * depth and node bounds a schema cannot state.
 */
export function criteriaJsonSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: `drover criteria, version ${CRITERIA_VERSION}`,
    oneOf: ENTITIES.map((entity) => ({
      type: 'object',
      additionalProperties: false,
      required: ['version', 'entity', 'where'],
      properties: { version: { const: CRITERIA_VERSION }, entity: { const: entity }, where: exprRef(entity) },
    })),
    $defs: Object.fromEntries(ENTITIES.map((entity) => [`${entity}Expr`, expression(entity)])),
  };
}
