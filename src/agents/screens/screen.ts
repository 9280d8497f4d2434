/**
 * Screens as agents' rules read them, built by the mux port's own screen builders: a capture
 * with the pane's geometry (agentScreen), or the visible rows alone (screenOfRows).
 */
export { visibleScreen as agentScreen, visibleRows as screenOfRows, type ScreenGeometry } from '../../mux/index.js';
