import { describeRealAgent } from './scenario.js';

describeRealAgent('gemini', {
  interruptKeys: ['Escape'],
  trustDialog: true,
  badFlag: '--no-such-flag',
  // It names the unknown argument first, then prints its whole usage: the last lines are usage.
  badFlagMessage: /--list-sessions/,
});
