export * from './protocol.js';
export * from './serve.js';
export * from './client.js';
