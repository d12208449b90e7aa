/** The app store: config, run and metrics slices. Components select single keys, never the whole state. */
import { create } from 'zustand';
import { createConfigSlice, type ConfigSlice } from './configSlice';
import { createMetricsSlice, type MetricsSlice } from './metricsSlice';
import { createRunSlice, type RunSlice } from './runSlice';

export type AppState = ConfigSlice & RunSlice & MetricsSlice;

export const useAppStore = create<AppState>()((...a) => ({
  ...createConfigSlice(...a),
  ...createRunSlice(...a),
  ...createMetricsSlice(...a),
}));

export type { RunPhase } from './runSlice';
