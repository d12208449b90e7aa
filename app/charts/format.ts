/** Number formats and thinning shared by the charts (the live charts, the Compare view). */

/** A value in a tooltip or a table: integers as they are, others to 5 significant digits. */
export function fmt(v: number | undefined): string {
  if (v === undefined) return '';
  if (!Number.isFinite(v)) return String(v);
  if (v === 0 || Number.isInteger(v)) return String(v);
  if (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5) return v.toExponential(3);
  return String(Number(v.toPrecision(5)));
}

/** An axis tick label. */
export function tickFmt(v: number): string {
  if (v === 0 || Math.abs(v) >= 1000) return String(Math.round(v));
  if (Math.abs(v) < 1e-3) return v.toExponential(1);
  return String(Number(v.toPrecision(4)));
}

/** Every k-th row so at most `max` are drawn; the last row is always kept. */
export function thin<T>(rows: readonly T[], max: number): readonly T[] {
  if (rows.length <= max) return rows;
  const k = Math.ceil(rows.length / max);
  const out: T[] = [];
  for (let i = (rows.length - 1) % k; i < rows.length; i += k) out.push(rows[i]!);
  return out;
}
