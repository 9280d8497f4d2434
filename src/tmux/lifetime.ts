import { withCleanupErrors } from '../process/errors.js';

/** What a binding hands out that must be closed: the binding itself, a control connection. */
export interface Closable {
  close(): Promise<void>;
}

/**
 * Runs `use` with the resource and closes the resource afterwards, whatever happened. When
 * `use` fails, that failure is what the caller gets, never a failed close in its place (the
 * close's error is attached as cleanupErrors when the failure is one of drover's errors); a
 * close that fails after success is thrown.
 */
export async function closeAfter<R extends Closable, T>(resource: R, use: (resource: R) => Promise<T>): Promise<T> {
  let value: T;
  try {
    value = await use(resource);
  } catch (error) {
    try {
      await resource.close();
    } catch (cleanup) {
      throw withCleanupErrors(error, [cleanup instanceof Error ? cleanup : new Error(String(cleanup))]);
    }
    throw error;
  }
  await resource.close();
  return value;
}
