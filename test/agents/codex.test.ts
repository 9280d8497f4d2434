import { describeRealAgent } from './scenario.js';

describeRealAgent('codex', {
  interruptKeys: ['Escape'],
  trustDialog: true,
  badFlag: '--no-such-flag',
  badFlagMessage: /unexpected argument '--no-such-flag'/,
});
