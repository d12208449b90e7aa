/**
 * The Arena tab: ARLArena's four design dimensions (IS clipping, dynamic filtering, advantage
 * assignment, loss aggregation) and the rollout correction as a grid of runs. The left column picks the arena (a preset, or a
 * task and the levels of each dimension, seeds and iterations) and runs it; the right shows one card
 * per combination: success over the seeds (mean line, min-max band), crashes, the diagnosis,
 * final success and cost. A card opens its run (first seed) in the Train view.
 */
import { memo, useState } from 'react';
import { ARENA_DIMENSIONS, ARENA_PRESETS, arenaSpecToText, parseArenaSpec, parseSeedsText, TASK_IDS, type ArenaDimId, type ArenaSpec } from '../../workers/meta';
import { useArenaStore } from './arenaStore';
import { crashText, FILTER_LABELS, seedsText, FILTERS, filterCells, FINAL_WINDOW, SORT_KEYS, SORT_LABELS, sortCells, type CellFilter, type CellSummary, type SortKey } from './arenaModel';
import { Sparkline } from './Sparkline';
import './ArenaView.css';

function pct(x: number | null): string {
  return x === null ? '–' : `${(100 * x).toFixed(0)}%`;
}

/** A spec edit goes through the link format's parser: what the form accepts, a link can carry. */
function checked(spec: ArenaSpec): ArenaSpec | string {
  try {
    return parseArenaSpec(arenaSpecToText(spec));
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** The seeds field: seeds and ranges as a link or the CLI writes them (`1-4, 9`), spaces allowed. */
function parseSeeds(text: string): number[] | string {
  const parts = text.split(/[\s,]+/).filter((p) => p.length > 0);
  if (parts.length === 0) return 'expected at least one seed';
  try {
    return parseSeedsText(parts.join(','));
  } catch (e) {
    return (e as Error).message.replace(/^arena: seeds: /, '');
  }
}

function ArenaSetup() {
  const spec = useArenaStore((s) => s.spec);
  const phase = useArenaStore((s) => s.phase);
  const specError = useArenaStore((s) => s.specError);
  const skipped = useArenaStore((s) => s.skipped);
  const cells = useArenaStore((s) => s.cells);
  const workers = useArenaStore((s) => s.workers);
  const { setSpec, run, stop } = useArenaStore.getState();
  const [editError, setEditError] = useState<string | null>(null);
  const [seedText, setSeedText] = useState<string | null>(null);
  const running = phase === 'running';

  const edit = (next: ArenaSpec) => {
    const r = checked(next);
    if (typeof r === 'string') return setEditError(r);
    setEditError(null);
    setSpec(r);
  };
  const toggle = (dim: ArenaDimId, level: string, on: boolean) => {
    const now = spec.levels[dim];
    const levels = on ? ARENA_DIMENSIONS.find((d) => d.id === dim)!.levels.map((l) => l.id).filter((id) => id === level || now.includes(id)) : now.filter((id) => id !== level);
    edit({ ...spec, levels: { ...spec.levels, [dim]: levels } });
  };
  // A preset is its task, settings and levels: seeds and iterations may differ from its own.
  const designOf = (s: ArenaSpec) => JSON.stringify([s.task, s.set, s.levels]);
  const presetId = ARENA_PRESETS.find((p) => designOf(p.spec) === designOf(spec))?.id ?? '';
  const extra = Object.entries(spec.set);

  return (
    <section className="panel arena-setup" aria-label="Arena setup">
      <h2>Arena</h2>
      <div className="arena-row">
        <label className="arena-field arena-wide">
          Preset
          <select
            value={presetId}
            disabled={running}
            onChange={(e) => {
              const p = ARENA_PRESETS.find((x) => x.id === e.target.value);
              if (p) {
                setSeedText(null);
                // Its design on this arena's seeds and iterations (a preset's own 8 seeds are for the CLI's tables).
                edit({ ...structuredClone(p.spec), seeds: spec.seeds, iters: spec.iters });
              }
            }}
          >
            <option value="">custom</option>
            {ARENA_PRESETS.map((p) => (
              <option key={p.id} value={p.id} title={p.doc}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        <label className="arena-field">
          Task
          <select value={spec.task} disabled={running} onChange={(e) => edit({ ...spec, task: e.target.value })}>
            {TASK_IDS.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
      </div>
      {ARENA_DIMENSIONS.map((dim) => (
        <fieldset key={dim.id} className="arena-dim" disabled={running}>
          <legend title={dim.doc}>{dim.name}</legend>
          {dim.levels.map((lv) => {
            const on = spec.levels[dim.id].includes(lv.id);
            return (
              <label key={lv.id} title={lv.doc}>
                <input type="checkbox" checked={on} disabled={on && spec.levels[dim.id].length === 1} onChange={(e) => toggle(dim.id, lv.id, e.target.checked)} />
                {lv.name}
              </label>
            );
          })}
        </fieldset>
      ))}
      <div className="arena-row">
        <label className="arena-field">
          Seeds
          <input
            type="text"
            value={seedText ?? spec.seeds.join(', ')}
            disabled={running}
            onChange={(e) => {
              setSeedText(e.target.value);
              const seeds = parseSeeds(e.target.value);
              if (typeof seeds === 'string') setEditError(`seeds: ${seeds}`);
              else edit({ ...spec, seeds });
            }}
            onBlur={() => setSeedText(null)}
          />
        </label>
        <label className="arena-field">
          Iterations
          <input type="number" min={1} value={spec.iters} disabled={running} onChange={(e) => edit({ ...spec, iters: Number(e.target.value) })} />
        </label>
      </div>
      {extra.length > 0 && (
        <p className="arena-note">
          Every cell also sets {extra.map(([k, v]) => `${k}=${v}`).join(', ')}.
        </p>
      )}
      {(editError ?? specError) && (
        <p role="alert" className="arena-error">
          {editError ?? specError}
        </p>
      )}
      <div className="arena-row arena-run">
        {running ? (
          <button type="button" onClick={stop}>
            Stop
          </button>
        ) : (
          <button type="button" className="primary" disabled={cells.length === 0} onClick={() => run()}>
            Run {cells.length} × {spec.seeds.length} runs
          </button>
        )}
        <Progress />
      </div>
      <p className="arena-note">
        {workers} worker{workers === 1 ? '' : 's'} at once, on the backend the Train view uses.
      </p>
      {skipped.length > 0 && (
        <details className="arena-skipped">
          <summary>{skipped.length} combination{skipped.length === 1 ? '' : 's'} skipped</summary>
          <ul>
            {skipped.map((s) => (
              <li key={s.label}>
                {s.label}: {s.why}
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}

function Progress() {
  const p = useArenaStore((s) => s.progress);
  const phase = useArenaStore((s) => s.phase);
  if (p.iters === 0 && phase === 'idle') return null;
  return (
    <span className="arena-progress" data-testid="arena-progress">
      <progress max={Math.max(1, p.itersTotal)} value={p.iters} aria-label="Arena progress" /> {p.runsDone} of {p.runsTotal} runs, {p.iters} of {p.itersTotal} iterations
    </span>
  );
}

const CellCard = memo(function CellCard({ s, label, iters, onOpen }: { s: CellSummary; label: string; iters: number; onOpen: (id: string) => void }) {
  const crashed = s.crashed > 0;
  return (
    <li className={`arena-cell ${crashed ? 'crashed' : ''}`} data-testid="arena-cell" data-cell={s.cellId}>
      <button type="button" className="arena-cell-open" onClick={() => onOpen(s.cellId)} aria-label={`Open ${label} in the Train view`} title="Open this cell's run (its first seed) in the Train view">
        <span className="arena-cell-label">{label}</span>
      </button>
      <Sparkline band={s.success} xMax={iters} yRange={[0, 1]} marks={s.crashAt} label={`success of ${label}`} />
      <p className={`arena-crash ${crashed ? 'yes' : ''}`} data-testid="arena-crash" title={s.crashWhy ?? undefined}>
        {crashed ? '✖ ' : ''}
        {crashText(s)}
      </p>
      {crashed && s.crashWhy && (
        <p className="arena-why" data-testid="arena-why">
          Why: {s.crashWhy}
        </p>
      )}
      <dl className="arena-numbers">
        <div>
          <dt>final success</dt>
          <dd data-testid="arena-final">{pct(s.finalSuccess)}</dd>
        </div>
        <div>
          <dt>rollouts / iter</dt>
          <dd data-testid="arena-rollouts">{s.rolloutsPerIter === null ? '–' : s.rolloutsPerIter.toFixed(1)}</dd>
        </div>
        <div>
          <dt>wall / seed</dt>
          <dd data-testid="arena-wall">{s.wallSeconds === null ? '–' : `${s.wallSeconds.toFixed(1)} s`}</dd>
        </div>
        <div>
          <dt>diagnosis peak</dt>
          <dd data-testid="arena-diag">{pct(s.diagPeak)}</dd>
        </div>
      </dl>
      {s.diag.iters.length > 1 && <Sparkline band={s.diag} xMax={iters} yRange={[0, 1]} label={`diagnosis of ${label}`} className="diag" />}
      <p className="arena-seeds" data-testid="arena-seeds">
        {seedsText(s)}
      </p>
      {s.errors.length > 0 && (
        <p role="alert" className="arena-error">
          {s.errors.join('; ')}
        </p>
      )}
    </li>
  );
});

function ArenaGrid() {
  const cells = useArenaStore((s) => s.cells);
  const summaries = useArenaStore((s) => s.summaries);
  const sort = useArenaStore((s) => s.sort);
  const filter = useArenaStore((s) => s.filter);
  const iters = useArenaStore((s) => s.spec.iters);
  const { setSort, setFilter, openCell } = useArenaStore.getState();
  const labels = new Map(cells.map((c) => [c.id, c.label]));
  const all = cells.map((c) => summaries[c.id]).filter((s): s is CellSummary => s !== undefined);
  const shown = sortCells(filterCells(all, filter), sort);
  return (
    <section className="panel arena-grid-panel" aria-label="Arena grid">
      <div className="arena-grid-head">
        <label className="arena-field">
          Sort by
          <select value={sort} onChange={(e) => setSort(e.target.value as SortKey)}>
            {SORT_KEYS.map((k) => (
              <option key={k} value={k}>
                {SORT_LABELS[k]}
              </option>
            ))}
          </select>
        </label>
        <label className="arena-field">
          Show
          <select value={filter} onChange={(e) => setFilter(e.target.value as CellFilter)}>
            {FILTERS.map((f) => (
              <option key={f} value={f}>
                {FILTER_LABELS[f]}
              </option>
            ))}
          </select>
        </label>
        <p className="arena-note">
          Curves: success per iteration, mean over the seeds, band from the lowest to the highest seed; red marks: crashes. Final success: mean of
          the last {FINAL_WINDOW} iterations. Diagnosis: share of the update&apos;s gradient from negative-advantage tokens outside a strict clip.
        </p>
      </div>
      {shown.length === 0 ? (
        <p className="arena-note">{all.length === 0 ? 'No cells: pick at least one level of each dimension.' : 'No cell matches this filter.'}</p>
      ) : (
        <ul className="arena-grid" aria-label="Cells">
          {shown.map((s) => (
            <CellCard key={s.cellId} s={s} label={labels.get(s.cellId) ?? s.cellId} iters={iters} onOpen={openCell} />
          ))}
        </ul>
      )}
    </section>
  );
}

export function ArenaView() {
  return (
    <div id="view-arena" role="tabpanel" aria-labelledby="tab-arena" className="arena-view">
      <ArenaSetup />
      <ArenaGrid />
    </div>
  );
}
