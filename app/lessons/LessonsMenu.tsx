/** The Lessons menu in the header: each lesson opens its panel and loads its first step. */
import { useEffect, useRef } from 'react';
import { LESSONS } from '../../workers/meta';
import { useAppStore } from '../store';
import { useCompareStore } from '../compare/compareStore';
import { loadLessonStep } from './LessonPanel';
import './LessonsMenu.css';

export function LessonsMenu() {
  const ref = useRef<HTMLDetailsElement>(null);
  const close = () => ref.current?.removeAttribute('open');
  useEffect(() => {
    const onDown = (e: PointerEvent) => {
      if (ref.current?.open && !ref.current.contains(e.target as Node)) close();
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && ref.current?.open) {
        close();
        ref.current.querySelector('summary')?.focus();
      }
    };
    document.addEventListener('pointerdown', onDown);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('pointerdown', onDown);
      document.removeEventListener('keydown', onKey);
    };
  }, []);
  return (
    <details className="menu lessons-menu" ref={ref}>
      <summary>Lessons</summary>
      <div className="popover menu-items lessons-items" role="menu" aria-label="Lessons">
        {LESSONS.map((l, i) => (
          <button
            key={l.id}
            type="button"
            role="menuitem"
            data-lesson={l.id}
            aria-label={`${i + 1}. ${l.title}`}
            aria-describedby={`lesson-item-${l.id}`}
            onClick={() => {
              close();
              useCompareStore.getState().setTab('train');
              useAppStore.getState().openLesson({ id: l.id, step: 1 });
              loadLessonStep(l, 0);
            }}
          >
            <span className="lesson-item-title">
              {i + 1}. {l.title}
            </span>
            <span className="lesson-item-summary" id={`lesson-item-${l.id}`}>
              {l.summary}
            </span>
          </button>
        ))}
      </div>
    </details>
  );
}
