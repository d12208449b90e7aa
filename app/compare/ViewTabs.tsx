/** The page's views as tabs: Train (the playground), Compare (two runs side by side) and Arena (a grid of design choices over seeds). Arrow keys move between them. */
import type { KeyboardEvent } from 'react';
import { useCompareStore, type ViewTab } from './compareStore';
import './ViewTabs.css';

const TABS: Array<{ id: ViewTab; label: string }> = [
  { id: 'train', label: 'Train' },
  { id: 'compare', label: 'Compare' },
  { id: 'arena', label: 'Arena' },
];

export function ViewTabs() {
  const tab = useCompareStore((s) => s.tab);
  const setTab = useCompareStore((s) => s.setTab);
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const i = TABS.findIndex((t) => t.id === tab);
    const next = e.key === 'ArrowRight' ? i + 1 : e.key === 'ArrowLeft' ? i - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? TABS.length - 1 : null;
    if (next === null) return;
    e.preventDefault();
    const t = TABS[(next + TABS.length) % TABS.length]!;
    setTab(t.id);
    document.getElementById(`tab-${t.id}`)?.focus();
  };
  return (
    <div className="view-tabs" role="tablist" aria-label="View" onKeyDown={onKey}>
      {TABS.map((t) => (
        <button
          key={t.id}
          id={`tab-${t.id}`}
          type="button"
          role="tab"
          aria-selected={tab === t.id}
          aria-controls={`view-${t.id}`}
          tabIndex={tab === t.id ? 0 : -1}
          onClick={() => setTab(t.id)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}
