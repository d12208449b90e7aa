/**
 * The RunConfig being edited, and the backend choice. Every edit goes through the config module's
 * validators (withField, withMethods); a rejected edit leaves the config as it was and says why.
 * A change asks the run slice to reconfigure the trainer (Reset semantics).
 */
import type { StateCreator } from 'zustand';
import type { BackendChoice } from '../../workers/entry/api';
import { ConfigError, defaultConfig, withField, withMethods, type RunConfig } from '../../workers/meta';
import type { ParamValue } from '../../workers/core/methods/params';
import type { Focus } from '../../workers/formats/shareUrl';
import type { AppState } from '.';

export interface ConfigSlice {
  config: RunConfig;
  backend: BackendChoice;
  /** The last rejected edit, by key. */
  configError: { key: string; message: string } | null;
  /** Sets one flat key (`batch`, `env.values`, `grpo.eps`); false if the value was rejected. */
  setField(key: string, value: ParamValue): boolean;
  /** Sets the active methods; false if the set was rejected (a conflict, a required method). */
  setMethods(ids: string[]): boolean;
  setBackend(backend: BackendChoice): void;
  /** Replaces the whole config (a preset); the run restarts with it. */
  setConfig(config: RunConfig): void;
}

/** A focus that still points into the config's batch, else null. */
function validFocus(focus: Focus | null, config: RunConfig): Focus | null {
  if (!focus) return null;
  const count = focus.kind === 'group' ? config.batch : config.batch * config.group;
  return focus.index < count ? focus : null;
}

function messageOf(e: unknown): { key: string; message: string } {
  if (e instanceof ConfigError) return { key: e.key, message: e.message };
  return { key: 'config', message: e instanceof Error ? e.message : String(e) };
}

export const createConfigSlice: StateCreator<AppState, [], [], ConfigSlice> = (set, get) => ({
  config: defaultConfig(),
  backend: 'auto',
  configError: null,
  setField(key, value) {
    try {
      const config = withField(get().config, key, value);
      set({ config, configError: null, linkStep: null, focus: validFocus(get().focus, config) });
    } catch (e) {
      set({ configError: messageOf(e) });
      return false;
    }
    get().requestReconfigure();
    return true;
  },
  setMethods(ids) {
    try {
      const config = withMethods(get().config, ids);
      set({ config, configError: null, linkStep: null });
    } catch (e) {
      set({ configError: messageOf(e) });
      return false;
    }
    get().requestReconfigure();
    return true;
  },
  setBackend(backend) {
    set({ backend, linkStep: null });
    get().requestReconfigure(0);
  },
  setConfig(config) {
    set({ config, configError: null, linkStep: null, focus: validFocus(get().focus, config) });
    get().requestReconfigure(0);
  },
});
