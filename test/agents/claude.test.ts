import { describeRealAgent } from './scenario.js';

describeRealAgent('claude', {
  interruptKeys: ['Escape'],
  trustDialog: true,
  badFlag: '--no-such-flag',
  badFlagMessage: /unknown option '--no-such-flag'/,
});
