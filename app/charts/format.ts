/**
 * Number formats and thinning shared by the charts (the live charts, the Compare view) and the
 * summaries beside them. Every format gives a number a person reads, whatever the value: an
 * imported 1e308, the largest double, a subnormal or an infinity (∞, never "Infinity").
 */

/** ∞ or −∞ for an infinity, – for NaN; null for a finite value. */
function nonFinite(v: number): string | null {
  if (Number.isNaN(v)) return '–';
  if (v === Infinity) return '∞';
  if (v === -Infinity) return '−∞';
  return null;
}

/** A value in a tooltip or a table: integers as they are, others to 5 significant digits. */
export function fmt(v: number | undefined): string {
  if (v === undefined) return '';
  if (!Number.isFinite(v)) return nonFinite(v)!;
  if (v === 0) return '0';
  if (Number.isInteger(v) && Math.abs(v) < 1e15) return String(v);
  if (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5) return v.toExponential(3);
  return String(Number(v.toPrecision(5)));
}

/** `1.5e20`: a short exponent form for labels with little room (an axis). */
function shortExponent(v: number, digits: number): string {
  const [m, e] = v.toExponential(digits).split('e') as [string, string];
  return `${String(Number(m))}e${Number(e)}`;
}

/** An axis tick label: at most about 8 characters, so it stays beside its axis. */
export function tickFmt(v: number): string {
  if (!Number.isFinite(v)) return nonFinite(v)!;
  if (v === 0) return '0';
  if (Math.abs(v) >= 1e6) return shortExponent(v, 1);
  if (Math.abs(v) >= 1000) return String(Math.round(v));
  if (Math.abs(v) < 1e-3) return shortExponent(v, 1);
  return String(Number(v.toPrecision(4)));
}

/**
 * A fraction as a percentage (0.256 -> "25.6%"). Past what `x * 100` can hold (the largest double)
 * the exponent is raised by hand: 1.8e308 -> "1.80e+310%", never "Infinity%".
 */
export function percentText(x: number, digits = 1): string {
  if (!Number.isFinite(x)) return nonFinite(x)!;
  const p = x * 100;
  if (Number.isFinite(p)) return Math.abs(p) < 1e6 ? `${p.toFixed(digits)}%` : `${p.toExponential(2)}%`;
  const [m, e] = x.toExponential(2).split('e') as [string, string];
  const exp = Number(e) + 2;
  return `${m}e${exp < 0 ? '' : '+'}${exp}%`;
}

/** Every k-th row so at most `max` are drawn; the last row is always kept. */
export function thin<T>(rows: readonly T[], max: number): readonly T[] {
  if (rows.length <= max) return rows;
  const k = Math.ceil(rows.length / max);
  const out: T[] = [];
  for (let i = (rows.length - 1) % k; i < rows.length; i += k) out.push(rows[i]!);
  return out;
}
