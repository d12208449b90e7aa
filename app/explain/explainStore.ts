/**
 * What the Explain dialog shows and where it came from: the number being explained (a ref into the
 * page's batch, or into one of the batch lab's re-scored sets), the numbers visited before it (Back),
 * a share link's `explain=` waiting for its iteration, and step-through's stage. A store of its own,
 * so the app's slices stay as they are; the share link reads and writes it through app/urlSync.ts.
 */
import { create } from 'zustand';
import type { Ref, LinkQuantity } from '../../workers/explain/types';
import { stagePositions, type StageName, type StagePosition } from '../../workers/meta';
import type { BatchDump } from '../../workers/formats/batchDump';
import type { ExplainLink } from '../../workers/formats/shareUrl';

/** The batch the ref points into: the run's last batch, or the batch lab's set with these methods. */
export type ExplainSource = { kind: 'batch'; iter: number } | { kind: 'lab'; methods: string[]; iter: number };

export interface ExplainTarget {
  source: ExplainSource;
  ref: Ref;
}

/**
 * Live step-through: an iteration the worker played stage by stage (api.stepThrough), as dumps
 * after the rewards, after the advantage, after each optimizer step, then the final state.
 */
export interface LiveIteration {
  iter: number;
  dumps: BatchDump[];
  positions: StagePosition[];
}

/** The dump a position shows: rewards' for sample and rewards, then the advantage's, then step k's. */
export function dumpAt(live: LiveIteration, pos: number): BatchDump {
  const p = live.positions[pos]!;
  if (p.step !== null) return live.dumps[2 + p.step]!;
  return live.dumps[p.name === 'advantages' ? 1 : 0]!;
}

export function liveIteration(dumps: BatchDump[]): LiveIteration {
  return { iter: dumps[dumps.length - 1]!.iter, dumps, positions: stagePositions(dumps.length - 3) };
}

export interface ExplainState {
  target: ExplainTarget | null;
  back: ExplainTarget[];
  /** A link's explain= not opened yet: it opens once the page holds that iteration's batch. */
  pending: ExplainLink | null;
  /** Step-through's stage, or null when step-through is closed. */
  stage: StageName | null;
  /** Live step-through's iteration and position in it (null: step-through reviews the last batch). */
  live: LiveIteration | null;
  pos: number;
  /** Starts live step-through at its first stage. */
  startLive(live: LiveIteration): void;
  /** Moves to position `pos` of the live iteration. */
  goTo(pos: number): void;
  /** Ends live step-through (the page shows the iteration's final batch again). */
  endLive(): void;
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
  live: null,
  pos: 0,
  startLive: (live) => set({ live, pos: 0, stage: live.positions[0]!.name }),
  goTo: (pos) => {
    const live = get().live;
    if (live && pos >= 0 && pos < live.positions.length) set({ pos, stage: live.positions[pos]!.name });
  },
  endLive: () => set({ live: null, pos: 0 }),
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
  // A stage by name (a stage= link, the list of stages): in a live iteration, that stage of the
  // current optimizer step where it is one, else its first position.
  setStage: (stage) => {
    const live = get().live;
    if (!live || stage === null) return set({ stage });
    const cur = live.positions[get().pos]!;
    const at = live.positions.findIndex((p) => p.name === stage && (p.step === null || cur.step === null || p.step === cur.step));
    const pos = at >= 0 ? at : live.positions.findIndex((p) => p.name === stage);
    set({ stage, pos: pos >= 0 ? pos : get().pos });
  },
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
