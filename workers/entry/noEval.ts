/**
 * The trainer worker's own guard against code from strings. A worker takes its Content-Security-
 * Policy from its script's response headers, not from the page's <meta> tag, and a static host may
 * send none; so the worker also removes eval, the Function constructors (plain, async, generator)
 * and string timers from its global scope before it runs anything else. Libraries that probe for
 * eval (zod's JIT) see it refused and take their eval-free path.
 */
export function forbidEval(scope: typeof globalThis): void {
  const refuse = (): never => {
    throw new EvalError('code from strings is refused in the trainer worker (its Content-Security-Policy forbids eval)');
  };
  const lock = (obj: object, key: PropertyKey, value: unknown) => Object.defineProperty(obj, key, { value, writable: false, configurable: false });
  lock(scope, 'eval', refuse);
  const protos = [
    Function.prototype,
    Object.getPrototypeOf(async function () {}),
    Object.getPrototypeOf(function* () {}),
    Object.getPrototypeOf(async function* () {}),
  ] as Array<{ constructor: unknown }>;
  for (const proto of protos) {
    const blocked = function () {
      refuse();
    };
    // `x instanceof Function` keeps working: the stand-in shares the real prototype.
    lock(blocked, 'prototype', proto);
    lock(proto, 'constructor', blocked);
    if (proto === Function.prototype) lock(scope, 'Function', blocked);
  }
  for (const name of ['setTimeout', 'setInterval'] as const) {
    const real = scope[name] as (handler: unknown, ...rest: unknown[]) => unknown;
    if (typeof real !== 'function') continue;
    lock(scope, name, (handler: unknown, ...rest: unknown[]) => (typeof handler === 'function' ? real.call(scope, handler, ...rest) : refuse()));
  }
}
