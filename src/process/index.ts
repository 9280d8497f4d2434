export * from './errors.js';
export * from './run.js';
