import type { RpcEventKind, RpcParams } from '../../hosts/index.js';
import { RpcRequestError } from '../../hosts/index.js';
import { MuxError, type MuxPort } from '../../mux/index.js';
import { messageOf, type CliIO } from '../io.js';
import { openResolvedMux, resolveMux } from './mux.js';

/** How long a watch may take to be established before the request is answered with its failure. */
const WATCH_UP_MS = 10_000;

const WATCH_PARAMS: ReadonlySet<string> = new Set(['mux', 'panes', 'socket_name', 'socket_path']);

function stringParam(params: RpcParams, name: string): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new RpcRequestError('usage', `watch: param ${name} is a string`);
  return value;
}

/**
 * A subscription to the panes of this host's multiplexer (chosen as `drover mux` chooses it):
 * `topology` when panes, tabs or spaces change, `pane` when a listed pane's content does, and
 * `down` when the multiplexer goes away, after which the subscription is over.
 */
export async function watchPanes(params: RpcParams, io: CliIO, emit: (kind: RpcEventKind, extra?: { paneId?: string; detail?: string }) => void, signal: AbortSignal): Promise<void> {
  const unknown = Object.keys(params).filter((name) => !WATCH_PARAMS.has(name));
  if (unknown.length > 0) throw new RpcRequestError('usage', `watch takes no param ${unknown.join(', ')}; it takes ${[...WATCH_PARAMS].join(', ')}`);
  const panes = params.panes;
  if (panes !== undefined && !(Array.isArray(panes) && panes.every((pane) => typeof pane === 'string'))) throw new RpcRequestError('usage', 'watch: param panes is a list of pane ids');
  let port: MuxPort;
  try {
    port = openResolvedMux(resolveMux({ mux: stringParam(params, 'mux'), socketName: stringParam(params, 'socket_name'), socketPath: stringParam(params, 'socket_path') }, io), io);
  } catch (error) {
    throw new RpcRequestError(error instanceof MuxError ? error.reason : 'usage', messageOf(error));
  }
  await new Promise<void>((resolve, reject) => {
    let up = false;
    const timer = setTimeout(() => fail(`the ${port.mux} watch was not established within ${WATCH_UP_MS} ms`), WATCH_UP_MS);
    const fail = (detail: string): void => {
      clearTimeout(timer);
      void port.close();
      reject(new RpcRequestError('unreachable', detail, 1));
    };
    const watch = port.watch({
      panes: panes as string[] | undefined,
      signal,
      onTopologyChange: () => emit('topology'),
      onPaneChange: (paneId) => emit('pane', { paneId }),
      // The reply to `watch` says it is up; later `up`s follow a recovery the adapter made.
      onUp: () => {
        if (up) {
          emit('up');
          return;
        }
        up = true;
        clearTimeout(timer);
        resolve();
      },
      onDown: (reason) => {
        if (!up) fail(reason);
        else emit('down', { detail: reason });
        void port.close();
      },
    });
    signal.addEventListener(
      'abort',
      () => {
        watch.close();
        void port.close();
        if (!up) fail('the watch was closed before it was established');
      },
      { once: true },
    );
  });
}
