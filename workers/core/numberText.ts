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
