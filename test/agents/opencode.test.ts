import { describeRealAgent } from './scenario.js';

describeRealAgent('opencode', {
  // The first Escape arms "esc again to interrupt", the second interrupts.
  interruptKeys: ['Escape', 'Escape'],
  trustDialog: false,
  badFlag: '--no-such-flag',
  badFlagMessage: /log level/,
});
