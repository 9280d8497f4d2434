/** Pairing a browser (the one write open to an unpaired one) and saying which device this is. */
import type { Device, DeviceRegistry } from '../devices.js';
import { DEVICE_COOKIE, type DeviceView } from '../protocol.js';
import { json, stringField, type Route } from '../routing.js';

const DEVICE_COOKIE_MAX_AGE_S = 400 * 24 * 3600;

function deviceView(device: Device): { device: DeviceView } {
  return { device: { device_id: device.deviceId, name: device.name, paired_at: device.pairedAt } };
}

export function pairingRoutes(devices: DeviceRegistry): Route[] {
  return [
    {
      method: 'POST',
      pattern: /^\/api\/pair$/,
      action: 'pair',
      open: true,
      audited: true,
      handle: async (call) => {
        const body = await call.request.body();
        const { device, token } = devices.redeem(stringField(body, 'code')!, body.name);
        call.audit.detail = { paired: device.deviceId };
        return json(deviceView(device), { 'Set-Cookie': `${DEVICE_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${DEVICE_COOKIE_MAX_AGE_S}` });
      },
    },
    { method: 'GET', pattern: /^\/api\/session$/, action: 'session', handle: async (call) => json(deviceView(call.device!)) },
  ];
}
