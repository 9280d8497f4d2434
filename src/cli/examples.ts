import type { Command } from 'commander';

/**
 * A short example for every command, by the words that name it ('' is drover itself). One
 * table, so that every command has one (a test walks the tree) and none is left behind when a
 * command goes.
 */
export const EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  '': ['drover up', 'drover pane map --all-sessions', 'drover down'],
  up: ['drover up', 'drover up examples/agent-fleet.yaml'],
  down: ['drover down', 'drover down -L work --kill-server'],
  snapshot: ['drover snapshot', `drover snapshot --json --where '{"field":"pane_current_command","op":"eq","value":"claude"}'`],
  rpc: ['drover rpc --stdio < requests.jsonl'],
  mcp: ['drover mcp --tier mutating', 'drover mcp -L work --enable-tool send_keys'],
  fleet: ['drover fleet create review --agent claude', 'drover fleet list'],
  'fleet create': ['drover fleet create review --agent claude'],
  'fleet list': ['drover fleet list --json'],
  'fleet show': ['drover fleet show 1'],
  'fleet delete': ['drover fleet delete 1'],
  'fleet capture': ['drover fleet capture 1 -l 20'],
  member: ['drover member create --fleet 1 --name tests --agent codex', 'drover member list --fleet 1'],
  'member create': ['drover member create --fleet 1 --name tests --agent codex --prompt "Run the test suite and report"'],
  'member list': ['drover member list --fleet 1'],
  'member show': ['drover member show 2 --json'],
  'member split': ['drover member split %3 --cwd ~/src/app --json -- codex'],
  'member delete': ['drover member delete 2'],
  'member prompt': ['drover member prompt 2 "also check the flaky network test"'],
  'member exec': ['drover member exec 2 "git status"'],
  'member capture': ['drover member capture 2 -l 40'],
  message: ['drover message send --from 1 --to 2 "rerun the tests"', 'drover message poll --member 2'],
  broker: ['drover broker serve'],
  'broker serve': ['drover broker serve', 'drover broker serve --socket ~/.local/state/drover/broker/broker.sock --json'],
  'message send': ['drover message send --from 1 --to 2 "rerun the tests"', 'drover message send --from 1 --broadcast "stop and report"'],
  'message poll': ['drover message poll --member 2 --json'],
  'message ack': ['drover message ack --member 2 7'],
  'message show': ['drover message show 7'],
  'message wait': ['drover message wait --member 1 --timeout-ms 60000'],
  'message listen': ['drover message listen --member 1'],
  pane: ['drover pane map --all-sessions', 'drover pane capture work:0.1 -l 20'],
  'pane map': ['drover pane map --all-sessions', 'drover pane map --session work --json', 'drover pane map --all-hosts'],
  'pane capture': ['drover pane capture %7 -l 20', 'drover pane capture work:editor --json'],
  'pane process': ['drover pane process %7'],
  'pane window-name': ['drover pane window-name ensure-prefix %5 »'],
  'pane window-name ensure-prefix': ['drover pane window-name ensure-prefix %5 »'],
  'pane window-name replace-prefix': ['drover pane window-name replace-prefix %5 » ›'],
  'pane open': ['drover pane open --provider claude -c ~/src/app', 'drover pane open --provider codex --role review --json'],
  'pane ready': ['drover pane ready %7', 'drover pane ready work:editor --json'],
  'pane deliver': ['drover pane deliver %7 --text "run the tests"', 'drover pane deliver work:0.1 --stdin < plan.md'],
  'pane keys': ['drover pane keys %7 Escape', 'drover pane keys gpu::%3 y Enter --json'],
  'pane kill': ['drover pane kill %7', 'drover pane kill work:scratch.1'],
  'pane explain': ['drover pane explain %3'],
  'pane questions': ['drover pane questions --all-sessions', 'drover pane questions --panes %3,work:1.0 --json', 'drover pane questions --all-hosts --json'],
  agent: ['drover agent setup --agent claude --dry-run'],
  'agent hook': ['drover agent hook waiting'],
  'agent setup': ['drover agent setup --agent codex --dry-run', 'drover agent setup --agent claude codex gemini opencode --yes'],
  mux: ['drover mux snapshot', 'drover mux capabilities --mux zellij'],
  'mux snapshot': ['drover mux snapshot', 'drover mux snapshot --mux herdr --json', 'drover mux snapshot --all-hosts --json'],
  'mux probe': ['drover mux probe', 'drover -L work mux probe --json'],
  'mux capabilities': ['drover mux capabilities', 'drover mux capabilities --mux tmux --json'],
  doctor: ['drover doctor', 'drover doctor -S /tmp/drover-Xr3kqa/tmux.sock --json'],
  workspace: ['drover workspace validate examples/agent-fleet.yaml', 'drover workspace load examples/agent-fleet.yaml -L work --attach'],
  'workspace validate': ['drover workspace validate examples/agent-fleet.yaml'],
  'workspace plan': ['drover workspace plan examples/agent-fleet.yaml --live'],
  'workspace load': ['drover workspace load examples/agent-fleet.yaml -L work --attach'],
  'workspace import': ['drover workspace import tmuxinator ~/.config/tmuxinator/blog.yml > blog.yaml'],
  web: ['drover web', 'drover web --port 0 --json'],
  'web pair': ['drover web pair'],
  'web devices': ['drover web devices --json'],
  'web revoke': ['drover web revoke 3f9a0c1e'],
  host: ['drover host add gpu --ssh gpu-box', 'drover host check'],
  'host add': ['drover host add gpu --ssh gpu-box', 'drover host add build --ssh me@build.lan --install'],
  'host list': ['drover host list', 'drover host list --json'],
  'host check': ['drover host check', 'drover host check gpu --json'],
  'host remove': ['drover host remove gpu'],
};

/** The `Example:` block a command's help ends with. */
function exampleBlock(lines: readonly string[]): string {
  return `\nExample${lines.length === 1 ? '' : 's'}:\n${lines.map((line) => `  ${line}`).join('\n')}`;
}

/** Ends the help of `command` and of every command under it with its examples from EXAMPLES. */
export function addExamples(command: Command, path: readonly string[] = []): void {
  const lines = EXAMPLES[path.join(' ')];
  if (lines !== undefined) command.addHelpText('after', exampleBlock(lines));
  for (const sub of command.commands) addExamples(sub, [...path, sub.name()]);
}
