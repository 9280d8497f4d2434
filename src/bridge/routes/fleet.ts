/** The fleet: its members, the Director's inbox, sending as the Director, acknowledging. */
import { BridgeError } from '../errors.js';
import type { FleetApi } from '../fleet.js';
import { integerField, json, SEGMENT, stringField, type Route } from '../routing.js';
import { textFingerprint } from '../audit.js';

export interface FleetRoutesContext {
  /** The fleet served now; undefined while drover web has no fleet database. */
  readonly fleet: () => FleetApi | undefined;
  /** Why there is no fleet. */
  readonly unavailable: string;
}

export function fleetId(text: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(text)) throw new BridgeError('bad_request', `fleet id ${JSON.stringify(text)} is not a positive whole number`);
  return Number(text);
}

export function fleetRoutes({ fleet, unavailable }: FleetRoutesContext): Route[] {
  const requireFleet = (): FleetApi => {
    const served = fleet();
    if (served === undefined) throw new BridgeError('fleet_unavailable', unavailable);
    return served;
  };
  return [
    {
      method: 'GET',
      pattern: /^\/api\/fleet$/,
      action: 'fleet',
      handle: async () => {
        const served = fleet();
        return json(served === undefined ? { available: false, reason: unavailable, fleets: [] } : await served.list());
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/api/fleet/${SEGMENT}/inbox$`),
      action: 'inbox',
      handle: async (call) => json(await requireFleet().inbox(fleetId(call.params[0]!))),
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/api/fleet/${SEGMENT}/messages$`),
      action: 'fleet-send',
      write: true,
      handle: async (call) => {
        const api = requireFleet();
        const id = fleetId(call.params[0]!);
        const body = await call.request.body();
        const to = integerField(body, 'to');
        const text = stringField(body, 'text')!;
        call.audit.target = `fleet ${id} member ${to}`;
        call.audit.detail = textFingerprint(text);
        return json(await api.send(id, to, text));
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/api/fleet/${SEGMENT}/ack$`),
      action: 'fleet-ack',
      write: true,
      handle: async (call) => {
        const api = requireFleet();
        const id = fleetId(call.params[0]!);
        const messageId = integerField(await call.request.body(), 'message_id');
        call.audit.target = `fleet ${id} message ${messageId}`;
        return json(await api.ack(id, messageId));
      },
    },
  ];
}
