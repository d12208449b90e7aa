/**
 * A change of the method set with its consequences said: a swap of advantage estimator (a run has
 * exactly one, so choosing one switches the other off) or a refusal is put in a notice, and a swap
 * can be undone in one click.
 */
import { ESTIMATOR_IDS, isMethodId, methodDef } from '../../workers/meta';
import { useAppStore } from '../store';

const nameOf = (id: string) => (isMethodId(id) ? methodDef(id).name : id);
const isEstimator = (id: string) => ESTIMATOR_IDS.includes(id);

/** What a change from `prev` to `next` switched off besides what was asked, in words; null when nothing. */
export function swapText(prev: readonly string[], next: readonly string[]): string | null {
  const gone = prev.filter((m) => !next.includes(m));
  const added = next.filter((m) => !prev.includes(m));
  const swapped = gone.filter(isEstimator);
  const newEstimator = added.find(isEstimator);
  if (!newEstimator || swapped.length === 0) return null;
  return `${nameOf(newEstimator)} replaced ${swapped.map(nameOf).join(' and ')} as the advantage estimator (a run has exactly one).`;
}

/** Applies `next`; says a swap (with Undo) or a refusal in the methods notice. Returns whether it applied. */
export function changeMethods(next: string[]): boolean {
  const s = useAppStore.getState();
  const prev = [...s.config.methods];
  if (!s.setMethods(next)) {
    const err = useAppStore.getState().configError;
    s.setMethodNotice({ text: `Not changed: ${err ? err.message.replace(/^methods: /, '') : 'the config refused it'}`, undo: null, kind: 'refused' });
    return false;
  }
  const text = swapText(prev, next);
  s.setMethodNotice(text ? { text, undo: prev, kind: 'swap' } : null);
  return true;
}
