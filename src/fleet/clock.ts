export { formatTimestamp, systemClock, wallMicros, type Clock } from '../process/index.js';
