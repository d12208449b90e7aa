/**
 * A batch lab set as the Explain dialog's batch: asked of the worker (api.labDump) the first time
 * one of the set's numbers is clicked, kept while the lab's frozen batch stays the same.
 */
import { useEffect, useState } from 'react';
import type { LabDump } from '../../workers/explain/types';
import { useLabStore, frozenStale } from '../batchLab/labStore';
import { useAppStore } from '../store';
import { errorText } from '../store/errorText';
import { mainSession } from '../trainerSession';

const cache = new Map<string, Promise<LabDump>>();

export function useLabDump(source: { kind: 'lab'; methods: string[]; iter: number } | null): { lab: LabDump | null; why: string | null } {
  const frozen = useLabStore((s) => s.frozen);
  const epoch = useAppStore((s) => s.metricsEpoch);
  const iter = useAppStore((s) => s.series[s.series.length - 1]?.iter ?? 0);
  const phase = useAppStore((s) => s.phase);
  const imported = useAppStore((s) => s.imported !== null);
  const [got, setGot] = useState<{ key: string; lab: LabDump | null; error: string | null } | null>(null);
  const stale = source ? frozenStale(frozen, { imported, phase, iter, epoch }) : null;
  const key = source ? `${epoch}:${source.iter}:${source.methods.join(',')}` : '';
  useEffect(() => {
    if (!source || stale || source.iter !== frozen?.iter) return;
    let p = cache.get(key);
    if (!p) {
      const asked = mainSession.call((t) => t.labDump(source.methods));
      cache.set(key, asked);
      asked.catch(() => cache.delete(key));
      p = asked;
    }
    let live = true;
    p.then(
      (lab) => live && setGot({ key, lab, error: null }),
      (e: unknown) => live && setGot({ key, lab: null, error: errorText(e) }),
    );
    return () => {
      live = false;
    };
  }, [key, stale, source, frozen?.iter]);
  if (!source) return { lab: null, why: null };
  if (stale) return { lab: null, why: stale };
  if (source.iter !== frozen?.iter) return { lab: null, why: `The lab holds iteration ${frozen?.iter ?? '–'}'s batch, not ${source.iter}'s: freeze again.` };
  if (!got || got.key !== key) return { lab: null, why: 'Asking the worker for the set’s inputs…' };
  if (got.error) return { lab: null, why: got.error };
  return { lab: got.lab, why: null };
}
