export { ControlConnection, DEFAULT_CONTROL_LIMITS, type ControlLimits, type ControlDiagnostics, type ControlConnectionSpec, type ExchangeOptions, type GuardedReply } from './connection.js';
export { ConnectionLostError, ControlProtocolError, SubscriptionOverflowError, type LossReason } from './errors.js';
export {
  ControlParser,
  MAX_BLOCK_BYTES,
  MAX_LINE_BYTES,
  TOPOLOGY_KINDS,
  decodeNotification,
  unescapeOutput,
  type ControlEventKind,
  type DecodedNotification,
  type GuardedBlock,
  type ParserLimits,
  type ParserSink,
} from './parser.js';
export { planCommandLine, quoteArgument, splitCommands, type CommandLinePlan } from './quote.js';
export { planControlCommand, resultOfBlocks, type ControlPlan } from './routing.js';
export {
  Subscription,
  DEFAULT_SUBSCRIPTION_LIMITS,
  type ControlEvent,
  type NextOptions,
  type SubscribeOptions,
  type SubscriptionDiagnostics,
  type SubscriptionMode,
} from './subscription.js';
export { ControlTransport, type ControlHost } from './transport.js';
export { waitForOutput, waitForTopology, type OutputPredicate, type WaitForOutputOptions, type WaitForTopologyOptions } from './wait.js';
