export * from './protocol.js';
export * from './serve.js';
export * from './client.js';
export * from './ssh.js';
export * from './config.js';
export * from './link.js';
export * from './registry.js';
export * from './install.js';
