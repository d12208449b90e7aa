/**
 * Numbers written as text (a share link's values, the CLI's --set and --iters) parse one way
 * everywhere: decimal, optionally with a fraction and an exponent (`0.003`, `1e-7`, `-2`,
 * `1e+21`). Stricter than Number(): no hex or binary (`0x2`, `0b10`), no blanks, no empty string,
 * no `Infinity` or `NaN`, so a value means the same in a link and on a command line.
 */
export const NUMBER_TEXT_RE = /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** The number `text` writes, or NaN when it is not written as above (or overflows to ±Infinity). */
export function parseNumberText(text: string): number {
  if (text.length > 400 || !NUMBER_TEXT_RE.test(text)) return NaN;
  const v = Number(text) + 0; // + 0: -0 becomes 0
  return Number.isFinite(v) ? v : NaN;
}

/**
 * A count with thousands separators (`12,345`), as `toLocaleString('en-US')` writes an integer. Plain
 * code on purpose: a page's first Intl call sets up the number formatter (30-90 ms measured in a
 * fresh Chromium page), and counts are written while the page loads.
 */
export function countText(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const s = String(Math.abs(Math.round(n)));
  return (n < 0 && Math.round(n) !== 0 ? '-' : '') + s.replace(/\B(?=(\d{3})+$)/g, ',');
}
