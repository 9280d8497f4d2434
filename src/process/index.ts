export * from './errors.js';
export * from './run.js';
export * from './shell.js';
export * from './executable.js';
