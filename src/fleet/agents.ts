import { ArgumentError, DroverError, findExecutable } from '../process/index.js';
import { userShell } from '../agents/index.js';
import type { CodingAgent } from './model.js';

/** The `--effort` levels each coding agent accepts; an empty list refuses `--effort`. */
export const EFFORT_LEVELS: Readonly<Record<CodingAgent, readonly string[]>> = Object.freeze({
  claude: Object.freeze(['low', 'medium', 'high', 'xhigh', 'max']),
  codex: Object.freeze(['minimal', 'low', 'medium', 'high', 'xhigh']),
  gemini: Object.freeze([]),
  opencode: Object.freeze([]),
  shell: Object.freeze([]),
});

export const PROMPT_PLACEHOLDERS = Object.freeze(['fleet_id', 'member_id', 'director_member_id', 'coding_agent'] as const);
export type PromptPlaceholder = (typeof PROMPT_PLACEHOLDERS)[number];
export type PromptValues = Readonly<Record<PromptPlaceholder, string | number>>;

/** The spawn prompt when `--prompt` is not given: who the member is and how it talks to its fleet. */
export const DEFAULT_PROMPT_TEMPLATE = [
  'You are a member of a drover fleet, working for its Director.',
  'FLEET ID: {fleet_id}',
  'YOUR MEMBER ID: {member_id}',
  'DIRECTOR MEMBER ID: {director_member_id}',
  'CODING AGENT: {coding_agent}',
  'Messages arrive in your input as [drover msg ID from SENDER TIME] lines. Read them with `drover message poll --member {member_id}`,',
  'acknowledge each with `drover message ack --member {member_id} ID`, and report with `drover message send --from {member_id} --to {director_member_id} TEXT`.',
].join('\n');

/** The spec's model names: word characters plus the punctuation providers use. */
const MODEL_NAME = /^[A-Za-z0-9._:/@+-]+$/;
const OPENCODE_MODEL = /^[A-Za-z0-9._:@+-]+\/[A-Za-z0-9._:/@+-]+$/;

export interface AgentOptions {
  agent: CodingAgent;
  /** A prompt template (see PROMPT_PLACEHOLDERS); not valid for the shell agent. */
  prompt?: string;
  model?: string;
  effort?: string;
}

type Segment = { literal: string } | { placeholder: PromptPlaceholder };

const PLACEHOLDER_LIST = PROMPT_PLACEHOLDERS.map((name) => `{${name}}`).join(', ');

/**
 * Splits a prompt template into literal text and placeholders. `{{` and `}}` are literal
 * braces; any other brace must open or close one of the four placeholders.
 */
export function parsePromptTemplate(template: string, where = '--prompt'): Segment[] {
  const segments: Segment[] = [];
  let literal = '';
  for (let i = 0; i < template.length; i += 1) {
    const char = template[i]!;
    if ((char === '{' || char === '}') && template[i + 1] === char) {
      literal += char;
      i += 1;
      continue;
    }
    if (char === '}') throw new ArgumentError(`single '}' at offset ${i} in ${where}; write }} for a literal brace`);
    if (char !== '{') {
      literal += char;
      continue;
    }
    const close = template.indexOf('}', i + 1);
    if (close === -1) throw new ArgumentError(`unclosed '{' at offset ${i} in ${where}; write {{ for a literal brace`);
    const name = template.slice(i + 1, close);
    if (!(PROMPT_PLACEHOLDERS as readonly string[]).includes(name)) {
      throw new ArgumentError(`Unknown placeholder '{${name}}' in ${where}. Supported placeholders: ${PLACEHOLDER_LIST}`);
    }
    if (literal !== '') segments.push({ literal });
    literal = '';
    segments.push({ placeholder: name as PromptPlaceholder });
    i = close;
  }
  if (literal !== '') segments.push({ literal });
  return segments;
}

export function renderPromptTemplate(template: string, values: PromptValues): string {
  return parsePromptTemplate(template)
    .map((segment) => ('literal' in segment ? segment.literal : String(values[segment.placeholder])))
    .join('');
}

/**
 * Refuses agent options the agent cannot take, before anything is registered or spawned:
 * unknown effort levels, malformed model names, a prompt template with unknown
 * placeholders, and any of them for the plain shell agent.
 */
export function validateAgentOptions(options: AgentOptions): void {
  const { agent, prompt, model, effort } = options;
  if (agent === 'shell') {
    const given = (['prompt', 'model', 'effort'] as const).filter((name) => options[name] !== undefined);
    if (given.length > 0) throw new ArgumentError(`the shell agent takes no ${given.map((name) => `--${name}`).join(', ')}`);
    return;
  }
  if (prompt !== undefined) {
    if (prompt.trim() === '') throw new ArgumentError('--prompt may not be empty.');
    if (prompt.includes('\0')) throw new ArgumentError('--prompt contains a NUL character');
    parsePromptTemplate(prompt);
  }
  if (model !== undefined) {
    const pattern = agent === 'opencode' ? OPENCODE_MODEL : MODEL_NAME;
    if (!pattern.test(model)) {
      throw new ArgumentError(
        agent === 'opencode'
          ? `--model for opencode must look like provider/model (got '${model}')`
          : `--model '${model}' is not a model name (letters, digits and . _ : / @ + -)`,
      );
    }
  }
  if (effort !== undefined) {
    const levels = EFFORT_LEVELS[agent];
    if (levels.length === 0) throw new ArgumentError(`${agent} takes no --effort`);
    if (!levels.includes(effort)) throw new ArgumentError(`--effort for ${agent} must be one of ${levels.join(', ')} (got '${effort}')`);
  }
}

/** The program a coding agent starts as: a name looked up on PATH, or the user's shell. */
export function agentProgram(agent: CodingAgent, env: NodeJS.ProcessEnv): string {
  return agent === 'shell' ? userShell(env) : agent;
}

/** Fails, before anything is registered, when the agent's program cannot be started. */
export function requireAgentProgram(agent: CodingAgent, env: NodeJS.ProcessEnv): string {
  const program = agentProgram(agent, env);
  const found = findExecutable(program, env);
  if (found === undefined) throw new DroverError(`binary ${program} not found on PATH`, { phase: 'validate', delivery: 'not_sent' });
  return found;
}

export interface LaunchRequest extends AgentOptions {
  memberName: string;
  /** Values for the prompt template's placeholders. */
  values: PromptValues;
  env: NodeJS.ProcessEnv;
}

/**
 * Whether the agent runs a prompt given on its command line as its first turn. opencode's
 * `--prompt` only fills the composer, so its spawn prompt goes as the member's first message.
 */
export function takesPromptOnCommandLine(agent: CodingAgent): boolean {
  return agent === 'claude' || agent === 'codex' || agent === 'gemini';
}

/** The member's rendered spawn prompt (the default template when none was given). */
export function spawnPrompt(request: Pick<LaunchRequest, 'prompt' | 'values'>): string {
  return renderPromptTemplate(request.prompt ?? DEFAULT_PROMPT_TEMPLATE, request.values);
}

/** The argv that starts the member's coding agent, with its spawn prompt where the agent takes one. */
export function agentArgv(request: LaunchRequest): string[] {
  const { agent, model, effort } = request;
  if (agent === 'shell') return [agentProgram('shell', request.env)];
  const prompt = spawnPrompt(request);
  switch (agent) {
    case 'claude':
      return [
        'claude',
        '--permission-mode',
        'dontAsk',
        '--allowedTools',
        'Bash(drover message *)',
        '--name',
        request.memberName,
        ...(model === undefined ? [] : ['--model', model]),
        ...(effort === undefined ? [] : ['--effort', effort]),
        prompt,
      ];
    case 'codex':
      return [
        'codex',
        // Each member its own codex: a shared daemon would report every member's state on one pane.
        '--no-daemon',
        '--ask-for-approval',
        'never',
        '--sandbox',
        'workspace-write',
        ...(model === undefined ? [] : ['--model', model]),
        ...(effort === undefined ? [] : [`--config=model_reasoning_effort=${effort}`]),
        prompt,
      ];
    case 'gemini':
      // Only the fleet's own message commands run without asking; everything else asks as usual.
      return ['gemini', '--allowed-tools', 'run_shell_command(drover message)', ...(model === undefined ? [] : ['--model', model]), '--prompt-interactive', prompt];
    case 'opencode':
      return ['opencode', ...(model === undefined ? [] : ['--model', model])];
  }
}

/** For multiplexers that start programs by typing them; its home is the process layer, which the mux adapters share. */
export { shellCommandLine } from '../process/index.js';
