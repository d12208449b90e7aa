/**
 * How many trainer workers the page's lessons use. A module of its own, importing nothing: app/boot.ts
 * reads it before the rest of the app is evaluated.
 */

/** Workers in all, the page's own one included: one per core, at least 1. */
export function workersFor(cores: number | undefined, seeds: number): number {
  const c = Number.isFinite(cores) && cores! >= 1 ? Math.floor(cores!) : 1;
  return Math.max(1, Math.min(c, seeds));
}
