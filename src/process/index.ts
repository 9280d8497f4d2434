export * from './errors.js';
export * from './run.js';
export * from './shell.js';
export * from './executable.js';
export * from './signals.js';
export * from './frames.js';
export * from './time.js';
export * from './exit-status.js';
