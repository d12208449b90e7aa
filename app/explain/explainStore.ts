/**
 * What the Explain dialog shows and where it came from: the number being explained (a ref into the
 * page's batch, or into one of the batch lab's re-scored sets), the numbers visited before it (Back),
 * a share link's `explain=` waiting for its iteration, and step-through's stage. A store of its own,
 * so the app's slices stay as they are; the share link reads and writes it through app/urlSync.ts.
 */
import { create } from 'zustand';
import type { Ref, LinkQuantity } from '../../workers/explain/types';
import type { StageName } from '../../workers/explain/stages';
import type { ExplainLink } from '../../workers/formats/shareUrl';

/** The batch the ref points into: the run's last batch, or the batch lab's set with these methods. */
export type ExplainSource = { kind: 'batch'; iter: number } | { kind: 'lab'; methods: string[]; iter: number };

export interface ExplainTarget {
  source: ExplainSource;
  ref: Ref;
}

export interface ExplainState {
  target: ExplainTarget | null;
  back: ExplainTarget[];
  /** A link's explain= not opened yet: it opens once the page holds that iteration's batch. */
  pending: ExplainLink | null;
  /** Step-through's stage, or null when step-through is closed. */
  stage: StageName | null;
  /** Opens an explanation (from a click on a number), forgetting the trail. */
  open(target: ExplainTarget): void;
  /** Follows an input of the explanation shown: Back returns to it. */
  follow(ref: Ref): void;
  goBack(): void;
  close(): void;
  setPending(link: ExplainLink | null): void;
  setStage(stage: StageName | null): void;
}

export const useExplainStore = create<ExplainState>()((set, get) => ({
  target: null,
  back: [],
  pending: null,
  stage: null,
  open: (target) => set({ target, back: [], pending: null }),
  follow: (ref) => {
    const t = get().target;
    if (!t) return;
    set({ target: { source: t.source, ref }, back: [...get().back, t].slice(-50) });
  },
  goBack: () => {
    const back = get().back;
    const prev = back[back.length - 1];
    if (prev) set({ target: prev, back: back.slice(0, -1) });
  },
  close: () => set({ target: null, back: [] }),
  setPending: (pending) => set({ pending }),
  setStage: (stage) => set({ stage }),
}));

/** The link form of what the dialog shows: a token of the run's batch. */
export function explainLinkOf(target: ExplainTarget | null): ExplainLink | null {
  if (!target || target.source.kind !== 'batch' || target.ref.kind !== 'token') return null;
  const iter = target.source.iter;
  const q = target.ref.q;
  const linkable: readonly string[] = ['adv', 'ratio', 'clip', 'loss', 'kl', 'weight'];
  if (!linkable.includes(q)) return null;
  return { iter, traj: target.ref.traj, tok: target.ref.tok, q: q as LinkQuantity };
}
