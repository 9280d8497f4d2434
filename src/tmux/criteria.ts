import { inspect, type InspectOptions } from 'node:util';
import { ArgumentError } from './errors.js';
import { ENTITY_FIELDS, fieldByWire, type CatalogEntity, type FieldSpec } from './catalog.js';
import { compileTextPattern, type TextTest } from './pattern.js';

/**
 * Criteria: a versioned JSON wire form for selecting snapshot records, validated whole
 * before use (inactive OR branches included). Evaluation is local to a captured snapshot.
 * Values are the caller's data (a token, a path): inspection, JSON.stringify and error
 * messages never show them; toWire() is the explicit export that does.
 *
 *   {"version": 1, "entity": "pane", "where": EXPR}
 *   EXPR := {"and": [EXPR…]} | {"or": [EXPR…]} | {"not": EXPR}
 *         | {"field": NAME, "op": OP, "value": V, "caseInsensitive"?: bool}
 *         | {"field": NAME, "op": "isNull" | "notNull"}
 *         | {"some" | "every" | "none": {"relation": NAME, "where": EXPR}}
 */

export const CRITERIA_VERSION = 1;

export const COMPARISON_OPS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const;
export const TEXT_OPS = ['startsWith', 'endsWith', 'contains', 'regex'] as const;
export const NULL_OPS = ['isNull', 'notNull'] as const;
export const QUANTIFIERS = ['some', 'every', 'none'] as const;

type ComparisonOp = (typeof COMPARISON_OPS)[number];
type TextOp = (typeof TEXT_OPS)[number];
type NullOp = (typeof NULL_OPS)[number];
type Quantifier = (typeof QUANTIFIERS)[number];
export type CriteriaEntity = Exclude<CatalogEntity, 'client'> | 'client';

/** Relations each entity can quantify over, and the entity they lead to. */
export const RELATIONS: Readonly<Record<CriteriaEntity, Readonly<Record<string, CriteriaEntity>>>> = Object.freeze({
  session: Object.freeze({ windows: 'window', panes: 'pane' }),
  window: Object.freeze({ sessions: 'session', panes: 'pane' }),
  pane: Object.freeze({ window: 'window', sessions: 'session' }),
  client: Object.freeze({}),
});

export const CRITERIA_LIMITS = Object.freeze({ maxDepth: 32, maxNodes: 1000, maxStringBytes: 4096, maxPatternBytes: 1024 });

export type Expr =
  | { readonly and: readonly Expr[] }
  | { readonly or: readonly Expr[] }
  | { readonly not: Expr }
  | { readonly field: string; readonly op: ComparisonOp | TextOp; readonly value: string | number | boolean; readonly caseInsensitive?: boolean }
  | { readonly field: string; readonly op: NullOp }
  | { readonly some: RelationClause }
  | { readonly every: RelationClause }
  | { readonly none: RelationClause };

export interface RelationClause {
  readonly relation: string;
  readonly where: Expr;
}

export interface CriteriaJson {
  readonly version: number;
  readonly entity: CriteriaEntity;
  readonly where: Expr;
}

/** What evaluation needs from a record: typed values by tmux field name, and relations. */
export interface EvaluableRecord {
  value(wire: string): string | number | boolean | null;
  related(relation: string): readonly EvaluableRecord[];
}

/** Refused criteria: the message names the path and the problem, never a value. */
export class CriteriaError extends ArgumentError {
  readonly path: string;
  constructor(path: string, problem: string) {
    super(`invalid criteria at ${path}: ${problem}`);
    this.path = path;
  }
}

type Predicate = (record: EvaluableRecord) => boolean;

interface ValidationState {
  nodes: number;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function onlyKeys(node: Record<string, unknown>, allowed: readonly string[], path: string): void {
  for (const key of Object.keys(node)) {
    if (!allowed.includes(key)) throw new CriteriaError(`${path}.${key}`, `unknown key (expected one of: ${allowed.join(', ')})`);
  }
}

function checkString(value: string, path: string, max: number): void {
  if (Buffer.byteLength(value) > max) throw new CriteriaError(path, `text is longer than ${max} bytes`);
}

function fieldSpec(entity: CriteriaEntity, name: unknown, path: string): FieldSpec {
  if (typeof name !== 'string') throw new CriteriaError(path, 'field must be a string');
  const found = fieldByWire(entity, name);
  if (!found) {
    const names = Object.values(ENTITY_FIELDS[entity]).map((f) => f.wire);
    throw new CriteriaError(path, `${entity} has no field ${JSON.stringify(name)} (fields: ${names.join(', ')})`);
  }
  return found.spec;
}

function compileComparison(spec: FieldSpec, op: ComparisonOp | TextOp, value: unknown, caseInsensitive: boolean, path: string): Predicate {
  const wire = spec.wire;
  const textual = spec.type === 'string' || spec.type === 'id';
  if ((TEXT_OPS as readonly string[]).includes(op)) {
    if (!textual) throw new CriteriaError(`${path}.op`, `${op} applies to text fields, and ${wire} is ${spec.type}`);
    if (typeof value !== 'string') throw new CriteriaError(`${path}.value`, `${op} needs a string value`);
  } else if (textual) {
    if (typeof value !== 'string') throw new CriteriaError(`${path}.value`, `${wire} is text; the value must be a string`);
  } else if (spec.type === 'bool') {
    if (typeof value !== 'boolean') throw new CriteriaError(`${path}.value`, `${wire} is boolean; the value must be true or false`);
    if (op !== 'eq' && op !== 'ne') throw new CriteriaError(`${path}.op`, `${op} does not apply to boolean ${wire}`);
  } else if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new CriteriaError(`${path}.value`, `${wire} is an integer; the value must be an integer`);
  }
  if (caseInsensitive && !textual) throw new CriteriaError(`${path}.caseInsensitive`, 'applies to text fields only');
  if (typeof value === 'string') checkString(value, `${path}.value`, op === 'regex' ? CRITERIA_LIMITS.maxPatternBytes : CRITERIA_LIMITS.maxStringBytes);

  const fold = (text: string): string => (caseInsensitive ? text.toLowerCase() : text);
  switch (op) {
    case 'regex': {
      let matches: TextTest;
      try {
        matches = compileTextPattern(value as string, { caseInsensitive });
      } catch (error) {
        throw new CriteriaError(`${path}.value`, (error as Error).message);
      }
      return (r) => {
        const v = r.value(wire);
        return typeof v === 'string' && matches(v);
      };
    }
    case 'startsWith':
    case 'endsWith':
    case 'contains': {
      const needle = fold(value as string);
      return (r) => {
        const v = r.value(wire);
        if (typeof v !== 'string') return false;
        const hay = fold(v);
        return op === 'startsWith' ? hay.startsWith(needle) : op === 'endsWith' ? hay.endsWith(needle) : hay.includes(needle);
      };
    }
    default: {
      const expected = typeof value === 'string' ? fold(value) : value;
      return (r) => {
        const raw = r.value(wire);
        if (raw === null) return op === 'ne';
        const v = typeof raw === 'string' ? fold(raw) : raw;
        switch (op) {
          case 'eq':
            return v === expected;
          case 'ne':
            return v !== expected;
          case 'lt':
            return v < (expected as number | string);
          case 'le':
            return v <= (expected as number | string);
          case 'gt':
            return v > (expected as number | string);
          case 'ge':
            return v >= (expected as number | string);
        }
      };
    }
  }
}

function compile(entity: CriteriaEntity, node: unknown, path: string, depth: number, state: ValidationState): Predicate {
  if (depth > CRITERIA_LIMITS.maxDepth) throw new CriteriaError(path, `nested deeper than ${CRITERIA_LIMITS.maxDepth}`);
  state.nodes += 1;
  if (state.nodes > CRITERIA_LIMITS.maxNodes) throw new CriteriaError(path, `more than ${CRITERIA_LIMITS.maxNodes} nodes`);
  if (!isPlainObject(node)) throw new CriteriaError(path, 'expected an object');

  if ('and' in node || 'or' in node) {
    const key = 'and' in node ? 'and' : 'or';
    onlyKeys(node, [key], path);
    const list = node[key];
    if (!Array.isArray(list) || list.length === 0) throw new CriteriaError(`${path}.${key}`, 'expected a non-empty array');
    const parts = list.map((child, i) => compile(entity, child, `${path}.${key}[${i}]`, depth + 1, state));
    return key === 'and' ? (r) => parts.every((p) => p(r)) : (r) => parts.some((p) => p(r));
  }
  if ('not' in node) {
    onlyKeys(node, ['not'], path);
    const inner = compile(entity, node.not, `${path}.not`, depth + 1, state);
    return (r) => !inner(r);
  }
  const quantifier = QUANTIFIERS.find((q) => q in node);
  if (quantifier) {
    onlyKeys(node, [quantifier], path);
    return compileRelation(entity, quantifier, node[quantifier], `${path}.${quantifier}`, depth, state);
  }
  if ('field' in node) {
    const spec = fieldSpec(entity, node.field, `${path}.field`);
    const op = node.op;
    if (typeof op !== 'string') throw new CriteriaError(`${path}.op`, 'op must be a string');
    if ((NULL_OPS as readonly string[]).includes(op)) {
      onlyKeys(node, ['field', 'op'], path);
      const wire = spec.wire;
      return op === 'isNull' ? (r) => r.value(wire) === null : (r) => r.value(wire) !== null;
    }
    if (![...COMPARISON_OPS, ...TEXT_OPS].includes(op as ComparisonOp)) {
      throw new CriteriaError(`${path}.op`, `unknown operator ${JSON.stringify(op)} (operators: ${[...COMPARISON_OPS, ...TEXT_OPS, ...NULL_OPS].join(', ')})`);
    }
    onlyKeys(node, ['field', 'op', 'value', 'caseInsensitive'], path);
    if (!('value' in node)) throw new CriteriaError(path, `${op} needs a value`);
    const ci = node.caseInsensitive;
    if (ci !== undefined && typeof ci !== 'boolean') throw new CriteriaError(`${path}.caseInsensitive`, 'must be true or false');
    return compileComparison(spec, op as ComparisonOp | TextOp, node.value, ci === true, path);
  }
  throw new CriteriaError(path, 'expected one of and, or, not, field, some, every, none');
}

function compileRelation(entity: CriteriaEntity, quantifier: Quantifier, clause: unknown, path: string, depth: number, state: ValidationState): Predicate {
  if (!isPlainObject(clause)) throw new CriteriaError(path, 'expected {"relation": …, "where": …}');
  onlyKeys(clause, ['relation', 'where'], path);
  const relation = clause.relation;
  const targets = RELATIONS[entity];
  if (typeof relation !== 'string' || !Object.hasOwn(targets, relation)) {
    const names = Object.keys(targets);
    throw new CriteriaError(`${path}.relation`, `${entity} has no relation ${JSON.stringify(relation)}${names.length ? ` (relations: ${names.join(', ')})` : ''}`);
  }
  const inner = compile(targets[relation]!, clause.where, `${path}.where`, depth + 1, state);
  switch (quantifier) {
    case 'some':
      return (r) => r.related(relation).some(inner);
    case 'every':
      return (r) => r.related(relation).every(inner);
    case 'none':
      return (r) => !r.related(relation).some(inner);
  }
}

/**
 * How deep the JSON of a valid tree can nest: each expression level adds at most two (`and`
 * with its array, a quantifier with its clause), a leaf one more.
 */
const MAX_JSON_DEPTH = 2 * CRITERIA_LIMITS.maxDepth + 2;

/**
 * Refuses input nested deeper than any valid tree, without recursing, so that copying,
 * freezing and compiling (which recurse) only ever see bounded depth.
 */
function checkNesting(where: unknown): void {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value: where, depth: 1, path: 'where' }];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_JSON_DEPTH) throw new CriteriaError(path, `nested deeper than ${CRITERIA_LIMITS.maxDepth}`);
    for (const [key, child] of Object.entries(value)) stack.push({ value: child, depth: depth + 1, path: Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}` });
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** A validated, immutable criteria tree for one entity kind. */
export class Criteria {
  readonly entity: CriteriaEntity;
  readonly where: Expr;
  private readonly predicate: Predicate;

  private constructor(entity: CriteriaEntity, where: Expr, predicate: Predicate) {
    this.entity = entity;
    this.where = where;
    this.predicate = predicate;
    Object.freeze(this);
  }

  /** Validates an expression for an entity; throws CriteriaError naming the offending path. */
  static build(entity: CriteriaEntity, where: unknown): Criteria {
    if (!Object.hasOwn(RELATIONS, entity)) {
      throw new CriteriaError('entity', `unknown entity ${JSON.stringify(entity)} (entities: ${Object.keys(RELATIONS).join(', ')})`);
    }
    checkNesting(where);
    const copy = deepFreeze(structuredClone(where)) as Expr;
    const predicate = compile(entity, copy, 'where', 1, { nodes: 0 });
    return new Criteria(entity, copy, predicate);
  }

  /** Parses the wire form (a JSON string or an already-parsed value). */
  static fromJSON(input: unknown): Criteria {
    const value = typeof input === 'string' ? parseJsonText(input) : input;
    if (!isPlainObject(value)) throw new CriteriaError('$', 'expected an object with version, entity and where');
    onlyKeys(value, ['version', 'entity', 'where'], '$');
    if (value.version !== CRITERIA_VERSION) throw new CriteriaError('$.version', `must be ${CRITERIA_VERSION}`);
    if (typeof value.entity !== 'string') throw new CriteriaError('$.entity', 'must be a string');
    if (!('where' in value)) throw new CriteriaError('$.where', 'is required');
    return Criteria.build(value.entity as CriteriaEntity, value.where);
  }

  /** JSON text of the versioned wire form, or of a bare expression for `entity`. */
  static parse(text: string, entity: CriteriaEntity = 'pane'): Criteria {
    const value = parseJsonText(text);
    return isPlainObject(value) && 'version' in value ? Criteria.fromJSON(value) : Criteria.build(entity, value);
  }

  test(record: EvaluableRecord): boolean {
    return this.predicate(record);
  }

  and(other: Criteria): Criteria {
    return this.combine('and', other);
  }

  or(other: Criteria): Criteria {
    return this.combine('or', other);
  }

  not(): Criteria {
    return Criteria.build(this.entity, { not: this.where });
  }

  private combine(key: 'and' | 'or', other: Criteria): Criteria {
    if (other.entity !== this.entity) throw new ArgumentError(`cannot combine ${this.entity} criteria with ${other.entity} criteria`);
    return Criteria.build(this.entity, { [key]: [this.where, other.where] });
  }

  /** The versioned wire form, values included: the explicit export (it holds the caller's data). */
  toWire(): CriteriaJson {
    return { version: CRITERIA_VERSION, entity: this.entity, where: this.where };
  }

  /** The wire form with every value redacted: what JSON.stringify (and so a log line) shows. */
  toJSON(): CriteriaJson {
    return { version: CRITERIA_VERSION, entity: this.entity, where: redacted(this.where) };
  }

  toString(): string {
    return `Criteria(${this.entity}) ${JSON.stringify(redacted(this.where))}`;
  }

  /** Shown whole (validation bounds the tree), values redacted. */
  [inspect.custom](depth: number, options: InspectOptions): string {
    return `Criteria(${this.entity}) ${inspect(redacted(this.where), { ...options, depth: Infinity })}`;
  }
}

/** What stands in for a literal value wherever criteria are shown rather than exported. */
const REDACTED = '[redacted]';

function redacted(node: Expr): Expr {
  if ('and' in node) return { and: node.and.map(redacted) };
  if ('or' in node) return { or: node.or.map(redacted) };
  if ('not' in node) return { not: redacted(node.not) };
  if ('some' in node) return { some: { relation: node.some.relation, where: redacted(node.some.where) } };
  if ('every' in node) return { every: { relation: node.every.relation, where: redacted(node.every.where) } };
  if ('none' in node) return { none: { relation: node.none.relation, where: redacted(node.none.where) } };
  return 'value' in node ? { ...node, value: REDACTED } : node;
}

/** Parses criteria JSON text; a syntax error says where, never what (V8's message quotes the text). */
function parseJsonText(text: string): unknown {
  if (Buffer.byteLength(text) > 64 * 1024) throw new CriteriaError('$', 'criteria JSON is larger than 64 KiB');
  try {
    return JSON.parse(text);
  } catch (error) {
    const position = /at position (\d+)/.exec((error as Error).message)?.[1];
    throw new CriteriaError('$', `not valid JSON${position === undefined ? '' : ` (at position ${position})`}`);
  }
}

/** What a validated tree reads: the fields of each entity it reaches, the relations it follows and whether it matches patterns. */
export interface CriteriaReads {
  readonly fields: Readonly<Partial<Record<CriteriaEntity, readonly string[]>>>;
  readonly relations: readonly string[];
  readonly patterns: boolean;
}

/** Walks a validated tree (its shape is already known good) and lists what evaluating it reads. */
export function criteriaReads(criteria: Criteria): CriteriaReads {
  const fields = new Map<CriteriaEntity, Set<string>>();
  const relations = new Set<string>();
  let patterns = false;
  const stack: { entity: CriteriaEntity; node: Expr; path: string }[] = [{ entity: criteria.entity, node: criteria.where, path: criteria.entity }];
  while (stack.length > 0) {
    const { entity, node, path } = stack.pop()!;
    if ('and' in node) for (const child of node.and) stack.push({ entity, node: child, path });
    else if ('or' in node) for (const child of node.or) stack.push({ entity, node: child, path });
    else if ('not' in node) stack.push({ entity, node: node.not, path });
    else if ('field' in node) {
      if (!fields.has(entity)) fields.set(entity, new Set());
      fields.get(entity)!.add(node.field);
      if (node.op === 'regex') patterns = true;
    } else {
      const clause = 'some' in node ? node.some : 'every' in node ? node.every : node.none;
      relations.add(`${path}.${clause.relation}`);
      stack.push({ entity: RELATIONS[entity][clause.relation]!, node: clause.where, path: `${path}.${clause.relation}` });
    }
  }
  return Object.freeze({
    fields: Object.freeze(Object.fromEntries([...fields].map(([entity, names]) => [entity, Object.freeze([...names].sort())]))),
    relations: Object.freeze([...relations].sort()),
    patterns,
  });
}
