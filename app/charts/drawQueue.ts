/**
 * One chart's first drawing per task. Charts that appear together (a view opening) would otherwise
 * all draw in the task of their size observers' callback, one long task; queued, each draws in a
 * task of its own and the page can paint and answer input between them. Recharts needs this
 * (BENCHMARKS.md: its first draw of a chart costs several times the SVG chart's).
 */
const queue: Array<() => void> = [];
let scheduled = false;

function runOne(): void {
  scheduled = false;
  queue.shift()?.();
  if (queue.length > 0) schedule();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setTimeout(runOne, 0);
}

/** Runs `draw` in a task of its own after those queued before it; the returned function cancels it. */
export function queueDraw(draw: () => void): () => void {
  queue.push(draw);
  schedule();
  return () => {
    const i = queue.indexOf(draw);
    if (i >= 0) queue.splice(i, 1);
  };
}
