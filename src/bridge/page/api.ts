/** The page's calls to drover web: same origin, the device cookie sent by the browser, JSON both ways. */
import type { ApiErrorCode } from '../protocol.js';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode | 'network',
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: method === 'POST' ? { 'Content-Type': 'application/json' } : {},
      body: method === 'POST' ? JSON.stringify(body ?? {}) : undefined,
    });
  } catch (error) {
    throw new ApiFailure(0, 'network', `drover web cannot be reached (${(error as Error).message})`);
  }
  const parsed = (await response.json().catch(() => undefined)) as unknown;
  if (!response.ok) {
    const failure = (parsed as { error?: { code?: ApiErrorCode; message?: string } & Record<string, unknown> } | undefined)?.error;
    throw new ApiFailure(response.status, failure?.code ?? 'internal', failure?.message ?? `drover web answered ${response.status}`, failure ?? {});
  }
  return parsed as T;
}

export const api = {
  get: <T>(path: string): Promise<T> => call<T>('GET', path),
  post: <T>(path: string, body: unknown = {}): Promise<T> => call<T>('POST', path, body),
};

export function panePath(paneId: string, verb: string): string {
  return `/api/panes/${encodeURIComponent(paneId)}/${verb}`;
}
