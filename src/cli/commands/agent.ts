import { Option, type Command } from 'commander';
import { createInterface } from 'node:readline';
import {
  AGENT_KINDS,
  AGENT_STATES,
  applyAgentSetup,
  installerFor,
  isAgentKind,
  isAgentState,
  planAgentSetup,
  writeAgentHookState,
  type AgentKind,
  type AgentSetupPlan,
} from '../../agents/index.js';
import { EXIT, ExitError, UsageError, shellQuote, writeJson, writeLine, writeWarning, type CliIO } from '../io.js';
import { droverArgv } from '../invocation.js';
import type { CommandContext } from '../program.js';
import { progressOn } from '../progress.js';

/**
 * `drover agent hook <state>`: what an agent's hook runs. It must never get in the agent's
 * way: it exits 0 whatever happens, says nothing outside tmux, and inside tmux only notes on
 * stderr why the state could not be recorded. Only an unknown state is refused.
 */
async function hook(_options: object, io: CliIO, state: string): Promise<number> {
  if (!isAgentState(state)) throw new UsageError(`unknown agent state ${JSON.stringify(state)}; use ${AGENT_STATES.join(', ')}`);
  const outcome = await writeAgentHookState(state, { env: io.env });
  if (!outcome.written && io.env.TMUX && io.env.TMUX_PANE) writeWarning(io, `agent state not recorded: ${outcome.reason}`);
  return EXIT.ok;
}

interface SetupOptions {
  /** Every agent named (--agent may be given several). */
  agent: string[];
  yes?: boolean;
  dryRun?: boolean;
  json?: boolean;
}

/** How each agent's hook configuration is called in what setup prints. */
const CONFIG_NAMES: Readonly<Record<AgentKind, string>> = {
  claude: 'Claude Code settings',
  codex: 'Codex config',
  gemini: 'Gemini CLI settings',
  opencode: 'opencode plugin',
};

function describePlan(plan: AgentSetupPlan, drover: readonly string[]): string {
  const lines = [
    `${CONFIG_NAMES[plan.agent]}: ${plan.path}`,
    'hooks (agent event → state):',
    ...installerFor(plan.agent)
      .describe()
      .map((line) => `  ${line}`),
    `each runs: ${[...drover, 'agent', 'hook'].map(shellQuote).join(' ')} <state>`,
  ];
  return lines.map((line) => `${line}\n`).join('');
}

/** Asks on stderr and reads one answer line from stdin; anything but y/yes is no. */
async function confirm(io: CliIO, question: string): Promise<boolean> {
  io.stderr.write(question);
  const lines = createInterface({ input: io.stdin, terminal: false });
  try {
    const answer = await new Promise<string>((resolve) => {
      lines.once('line', resolve);
      lines.once('close', () => resolve(''));
      io.signal.addEventListener('abort', () => resolve(''), { once: true });
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    lines.close();
  }
}

/** One agent's setup as it ended: the plan, whether the file was written, and the copy of what it was. */
interface SetupOutcome {
  readonly plan: AgentSetupPlan;
  readonly written: boolean;
  readonly backup: string | null;
}

/**
 * `drover agent setup`: merges the agent-state hooks into each named agent's configuration,
 * keeping everything else. It writes only with --yes or after a yes typed at a terminal, one
 * question for every file it would change.
 */
async function setup(options: SetupOptions, io: CliIO): Promise<number> {
  const agents = [...new Set(options.agent)];
  const unknown = agents.find((agent) => !isAgentKind(agent));
  if (unknown !== undefined) throw new UsageError(`unknown agent ${JSON.stringify(unknown)}; drover installs hooks for ${AGENT_KINDS.join(', ')}`);
  const drover = droverArgv();
  const plans = agents.filter(isAgentKind).map((agent) => planAgentSetup(drover, { agent, env: io.env }));
  const changing = plans.filter((plan) => plan.changed);
  const paths = changing.map((plan) => plan.path).join(', ');
  if (changing.length > 0 && !options.dryRun && !options.yes) {
    if (!io.stdinIsTTY) {
      throw new UsageError(`not changing ${paths} without confirmation: stdin is not a terminal; pass --yes to install the hooks, or --dry-run to see the change`);
    }
    for (const plan of changing) io.stderr.write(describePlan(plan, drover));
    if (!(await confirm(io, `Write these hooks to ${paths}? [y/N] `))) {
      throw new ExitError(`left ${paths} unchanged`, EXIT.failure, { code: 'declined' });
    }
  }
  const progress = progressOn(io, options);
  const outcomes = plans.map((plan): SetupOutcome => {
    if (options.dryRun || !plan.changed) return { plan, written: false, backup: null };
    const { backup } = applyAgentSetup(plan);
    progress.note(`${plan.agent}: hooks installed in ${plan.path}`);
    return { plan, written: true, backup };
  });
  if (options.json) {
    const documents = outcomes.map((outcome) => setupDocument(outcome, drover, options.dryRun === true));
    // One agent named: its document, as always; several: theirs in order.
    writeJson(io, documents.length === 1 ? documents[0] : { agents: documents });
    return EXIT.ok;
  }
  for (const { plan, backup } of outcomes) {
    if (!plan.changed) writeLine(io.stdout, `${plan.path} already has drover's agent hooks; nothing to change`);
    else if (options.dryRun) io.stdout.write(`would write ${plan.path}\n${describePlan(plan, drover)}--- new ${plan.path} ---\n${plan.text}`);
    else io.stdout.write(`installed drover's agent hooks\n${describePlan(plan, drover)}${backup === null ? '' : `the file as it was: ${backup}\n`}`);
  }
  return EXIT.ok;
}

function setupDocument({ plan, written, backup }: SetupOutcome, drover: readonly string[], dryRun: boolean): Record<string, unknown> {
  const document: Record<string, unknown> = {
    agent: plan.agent,
    path: plan.path,
    changed: plan.changed,
    written,
    backup,
    dry_run: dryRun,
    hooks: installerFor(plan.agent).describe(),
    command: `${[...drover, 'agent', 'hook'].map(shellQuote).join(' ')} <state>`,
  };
  if (dryRun) document.text = plan.text;
  return document;
}

export function registerAgentCommands(program: Command, context: CommandContext): void {
  const agent = program.command('agent').description("agent state: the hook agents run, and installing it in each agent's own configuration");

  agent
    .command('hook')
    .description("record this pane's agent state (run by the agent's hooks; always exits 0)")
    .argument('<state>', AGENT_STATES.join(', '))
    .action(context.action(hook));

  agent
    .command('setup')
    .description("install drover's agent-state hooks in an agent's own configuration, keeping everything else")
    .addOption(new Option('--agent <name...>', 'which agents (one or several)').choices([...AGENT_KINDS]).default(['claude'], 'claude'))
    .option('--yes', 'write without asking (needed when stdin is not a terminal)')
    .addOption(new Option('--dry-run', 'show the change, write nothing').conflicts('yes'))
    .option('--json', 'print one JSON document')
    .addHelpText(
      'after',
      `
Where each agent reports its state from:
  claude    ~/.claude/settings.json hooks (CLAUDE_CONFIG_DIR honoured)
  codex     ~/.codex/config.toml [[hooks.*]] with their trust hashes (CODEX_HOME honoured)
  gemini    ~/.gemini/settings.json hooks (GEMINI_CLI_HOME honoured)
  opencode  a plugin file in ~/.config/opencode/plugins (OPENCODE_CONFIG_DIR honoured)
States an agent's hooks cannot report are read off its screen (drover pane map says which).`,
    )
    .action(context.action(setup));
}
