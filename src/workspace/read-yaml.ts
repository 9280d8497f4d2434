import { CST, Lexer, LineCounter, isAlias, isMap, isScalar, isSeq, parseAllDocuments, type Node as YamlNode } from 'yaml';
import { WorkspaceError, combineProblems } from './errors.js';
import { TreeBudget, indexPath, keyPath, type TreeMap, type TreeValue, type WorkspaceLimits } from './tree.js';

/**
 * What each of the YAML parser's error codes means, said without the file's text: the parser's
 * own messages quote what they found, and a workspace file may hold a secret.
 */
const YAML_PROBLEMS: Readonly<Record<string, string>> = Object.freeze({
  BAD_INDENT: 'the indentation does not line up with the lines around it',
  TAB_AS_INDENT: 'a tab is used as indentation (YAML indents with spaces)',
  MISSING_CHAR: 'something is missing: a closing quote or bracket, the "-" of a list item, the ":" after a key or the "," between items',
  BLOCK_AS_IMPLICIT_KEY: 'a mapping cannot begin on the line of its own key (as in "a: b: c")',
  MULTILINE_IMPLICIT_KEY: 'a key must fit on one line',
  UNEXPECTED_TOKEN: 'unexpected text: check the indentation and the brackets before it',
  BAD_DQ_ESCAPE: 'a double-quoted string holds an escape YAML does not know',
  BAD_SCALAR_START: 'a plain value cannot begin with this character (quote the value)',
  BLOCK_IN_FLOW: 'an indented list or mapping cannot sit inside [ ] or { }',
  KEY_OVER_1024_CHARS: 'a key is longer than 1024 characters',
});

/**
 * YAML 1.2 (core schema) into the workspace tree. Anchors, aliases, tags, directives,
 * complex keys and multiple documents are refused where they appear, before anything is
 * resolved; duplicate keys are refused with their path.
 */
export function readYaml(text: string, limits: WorkspaceLimits): TreeValue {
  prescan(text, limits);
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, {
    version: '1.2',
    schema: 'core',
    strict: true,
    uniqueKeys: false,
    prettyErrors: false,
    intAsBigInt: false,
    lineCounter,
  });
  const list = Array.isArray(docs) ? docs : [];
  const first = list[0];
  if (list.length > 1) {
    throw new WorkspaceError('a workspace file holds exactly one YAML document', {
      path: '$',
      code: 'yaml_feature',
      unsupportedFeature: 'multiple_documents',
    });
  }
  const syntaxErrors = (first?.errors ?? []).map((error) => {
    const { line, col } = lineCounter.linePos(error.pos[0]);
    const what = YAML_PROBLEMS[error.code] ?? error.code.toLowerCase().replaceAll('_', ' ');
    return new WorkspaceError(`invalid YAML at line ${line}, column ${col}: ${what}`, { path: '$', code: 'syntax', line, column: col });
  });
  if (syntaxErrors.length > 0) throw combineProblems(syntaxErrors);
  const contents = first?.contents ?? null;
  return convert(contents, '$', 1, new TreeBudget(limits));
}

/**
 * The yaml composer recurses per nesting level and degrades badly on pathological input
 * (thousands of levels, hundreds of thousands of nodes), so a linear pass over the lexer's
 * tokens rejects those first. Its depth figure over-counts (indentation and inline
 * indicators both add a level); the exact bounds are checked on the composed tree.
 */
function prescan(text: string, limits: WorkspaceLimits): void {
  const depthCeiling = limits.maxDepth * 4;
  const indents: number[] = [];
  let flowDepth = 0;
  let inline = 0;
  let line = 1;
  let lineStart = true;
  let indent = 0;
  let scalars = 0;
  let skipContent = false;
  const tooDeep = (): never => {
    throw new WorkspaceError(`nesting is deeper than ${limits.maxDepth} levels (line ${line})`, {
      path: '$',
      code: 'bounds',
      line,
    });
  };
  for (const token of new Lexer().lex(text)) {
    if (skipContent) {
      skipContent = false;
      line += countNewlines(token);
      if (token.endsWith('\n')) {
        lineStart = true;
        indent = 0;
        inline = 0;
      }
      continue;
    }
    const type = CST.tokenType(token);
    if (type === 'newline') {
      line += 1;
      lineStart = true;
      indent = 0;
      inline = 0;
      continue;
    }
    if (type === 'space' && lineStart) {
      indent = token.length;
      continue;
    }
    if (type === 'comment' || type === 'space' || type === 'doc-mode' || type === 'byte-order-mark') continue;
    if (type === 'directive-line') {
      throw new WorkspaceError('YAML directives are not supported', {
        path: '$',
        code: 'yaml_feature',
        unsupportedFeature: 'yaml_directive',
        line,
      });
    }
    if (lineStart && flowDepth === 0) {
      while (indents.length > 0 && (indents.at(-1) ?? 0) > indent) indents.pop();
      if (indents.length === 0 || (indents.at(-1) ?? 0) < indent) indents.push(indent);
    }
    lineStart = false;
    if (type === 'scalar') {
      skipContent = true;
      scalars += 1;
    } else if (type === 'single-quoted-scalar' || type === 'double-quoted-scalar') {
      scalars += 1;
      line += countNewlines(token);
    } else if (type === 'flow-map-start' || type === 'flow-seq-start') {
      flowDepth += 1;
    } else if (type === 'flow-map-end' || type === 'flow-seq-end') {
      flowDepth = Math.max(0, flowDepth - 1);
    } else if (flowDepth === 0 && (type === 'seq-item-ind' || type === 'map-value-ind' || type === 'explicit-key-ind')) {
      inline += 1;
    }
    if (indents.length + inline + flowDepth > depthCeiling) tooDeep();
    if (scalars > limits.maxNodes) {
      throw new WorkspaceError(`the document has more than ${limits.maxNodes} nodes`, { path: '$', code: 'bounds', line });
    }
  }
}

function countNewlines(token: string): number {
  let count = 0;
  for (let i = token.indexOf('\n'); i !== -1; i = token.indexOf('\n', i + 1)) count += 1;
  return count;
}

function refuseYamlFeatures(node: YamlNode, path: string): void {
  if (node.anchor !== undefined) {
    throw new WorkspaceError('YAML anchors are not supported', { path, code: 'yaml_feature', unsupportedFeature: 'yaml_anchor' });
  }
  if (node.tag !== undefined) {
    throw new WorkspaceError('YAML tags are not supported', { path, code: 'yaml_feature', unsupportedFeature: 'yaml_tag' });
  }
}

function convert(node: unknown, path: string, depth: number, budget: TreeBudget): TreeValue {
  if (node === null || node === undefined) {
    budget.enter(path, depth);
    return null;
  }
  if (isAlias(node)) {
    throw new WorkspaceError('YAML aliases are not supported', { path, code: 'yaml_feature', unsupportedFeature: 'yaml_alias' });
  }
  budget.enter(path, depth);
  if (isScalar(node)) {
    refuseYamlFeatures(node, path);
    return scalarValue(node.value, path, budget);
  }
  if (isSeq(node)) {
    refuseYamlFeatures(node, path);
    return node.items.map((item, index) => convert(item, indexPath(path, index), depth + 1, budget));
  }
  if (isMap(node)) {
    refuseYamlFeatures(node, path);
    const map: TreeMap = new Map();
    for (const pair of node.items) {
      const key = mapKey(pair.key, path, map.size + 1, depth + 1, budget);
      const entryPath = keyPath(path, key, map.size + 1);
      if (map.has(key)) throw new WorkspaceError('this key appears more than once', { path: entryPath, code: 'duplicate_key' });
      map.set(key, convert(pair.value, entryPath, depth + 1, budget));
    }
    return map;
  }
  throw new WorkspaceError('unsupported YAML node', { path, code: 'yaml_feature', unsupportedFeature: 'yaml_node' });
}

function mapKey(key: unknown, parent: string, ordinal: number, depth: number, budget: TreeBudget): string {
  const keyAt = `${parent === '$' ? '' : `${parent}.`}<key ${ordinal}>`;
  budget.enter(keyAt, depth);
  if (key === null || key === undefined) throw new WorkspaceError('mapping keys must be strings', { path: keyAt, code: 'type' });
  if (isAlias(key)) {
    throw new WorkspaceError('YAML aliases are not supported', { path: keyAt, code: 'yaml_feature', unsupportedFeature: 'yaml_alias' });
  }
  if (!isScalar(key)) {
    throw new WorkspaceError('mapping keys must be plain strings', {
      path: keyAt,
      code: 'yaml_feature',
      unsupportedFeature: 'yaml_complex_key',
    });
  }
  refuseYamlFeatures(key, keyAt);
  if (typeof key.value !== 'string') throw new WorkspaceError('mapping keys must be strings', { path: keyAt, code: 'type' });
  return budget.string(keyAt, key.value);
}

function scalarValue(value: unknown, path: string, budget: TreeBudget): TreeValue {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'string') return budget.string(path, value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new WorkspaceError('numbers must be finite', { path, code: 'type' });
    return value;
  }
  throw new WorkspaceError('unsupported scalar', { path, code: 'type' });
}
