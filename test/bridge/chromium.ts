import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium (apt-get install -y chromium); DROVER_CHROMIUM names another. */
export const CHROMIUM = process.env.DROVER_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Headless, and quiet on a closed network: without these flags chromium keeps dialling
 * Google's services and floods refused connections. launch() gives every browser a fresh,
 * empty user data directory of its own.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile' } as const;
export const DESKTOP = { viewport: { width: 1280, height: 800 } } as const;
