/** The app store: config, run and metrics slices. Components select single keys, never the whole state. */
import { create } from 'zustand';
import { createConfigSlice, type ConfigSlice } from './configSlice';
import { createMetricsSlice, type MetricsSlice } from './metricsSlice';
import { createRunSlice, type RunSlice } from './runSlice';
import { createViewSlice, type ViewSlice } from './viewSlice';

export type AppState = ConfigSlice & RunSlice & MetricsSlice & ViewSlice;

export const useAppStore = create<AppState>()((...a) => ({
  ...createConfigSlice(...a),
  ...createRunSlice(...a),
  ...createMetricsSlice(...a),
  ...createViewSlice(...a),
}));

export type { RunPhase } from './runSlice';
export { currentBatch, type ImportedRun } from './viewSlice';
