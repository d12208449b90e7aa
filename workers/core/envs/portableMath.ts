/**
 * b^x from additions, multiplications and divisions only, so that JavaScript and Python compute the
 * same double: IEEE 754 rounds those operations the same everywhere, while Math.pow (V8's own
 * implementation) and the C library's pow behind Python's math.pow differ in the last bit for about
 * one exponent in ten. The search task's noise curriculum uses it, so the recipe's Python
 * (toyenv/search.py, `portable_pow`, the same operations in the same order) writes the playground's
 * noise values byte for byte. Accurate to a few units in the last place for the curriculum's range
 * (b in [1, 100], x in [0, 1]); not a general-purpose pow.
 */

/** The doubles nearest ln 2, sqrt 2 and sqrt 1/2 (the same literals in the Python). */
const LN2 = 0.6931471805599453;
const SQRT2 = 1.4142135623730951;
const SQRT1_2 = 0.7071067811865476;

/** ln b for a finite b > 0: b = 2^k r with r in [sqrt 1/2, sqrt 2), ln r = 2 atanh((r - 1) / (r + 1)). */
export function portableLog(b: number): number {
  let k = 0;
  let r = b;
  // Halving and doubling are exact.
  while (r >= SQRT2) {
    r = r / 2;
    k = k + 1;
  }
  while (r < SQRT1_2) {
    r = r * 2;
    k = k - 1;
  }
  const s = (r - 1) / (r + 1);
  const s2 = s * s;
  let term = s;
  let sum = s;
  // |s| <= 0.172: the terms past s^41 / 41 are below 1e-33.
  for (let n = 3; n <= 41; n += 2) {
    term = term * s2;
    sum = sum + term / n;
  }
  return k * LN2 + 2 * sum;
}

/** e^y for |y| up to a few hundred: y = k ln 2 + r with |r| <= ln 2 / 2, e^r by its series, then 2^k exactly. */
export function portableExp(y: number): number {
  const k = Math.floor(y / LN2 + 0.5);
  const r = y - k * LN2;
  let term = 1;
  let sum = 1;
  for (let n = 1; n <= 27; n++) {
    term = (term * r) / n;
    sum = sum + term;
  }
  let out = sum;
  for (let i = 0; i < k; i++) out = out * 2;
  for (let i = 0; i > k; i--) out = out / 2;
  return out;
}

/** b^x for b > 0 (1 at x = 0 and at b = 1, exactly). */
export function portablePow(b: number, x: number): number {
  if (x === 0 || b === 1) return 1;
  return portableExp(x * portableLog(b));
}
