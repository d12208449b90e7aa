/** The trainer worker's guard against code from strings (workers/entry/noEval.ts), in a fresh realm. */
import { createContext, runInContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { forbidEval } from '../../workers/entry/noEval';

describe('forbidEval', () => {
  it('refuses eval, every Function constructor and string timers; functions and instanceof still work', () => {
    const ctx = createContext({ setTimeout: (f: () => void) => f() });
    // The guard runs inside the realm it protects, as the worker runs it on its own global scope.
    runInContext(`(${forbidEval.toString()})(globalThis)`, ctx);
    const tries = {
      eval: 'eval("1 + 1")',
      indirectEval: '(0, globalThis.eval)("1")',
      newFunction: 'new Function("return 1")()',
      functionCall: 'Function("return 1")()',
      viaConstructor: '(function () {}).constructor("return 1")()',
      asyncConstructor: '(async function () {}).constructor("return 1")',
      generatorConstructor: '(function* () {}).constructor("yield 1")',
      stringTimer: 'setTimeout("globalThis.hit = 1")',
    };
    for (const [name, code] of Object.entries(tries)) {
      expect(() => runInContext(`"use strict"; ${code}`, ctx), name).toThrow(/code from strings is refused/);
    }
    // Locked: a later script cannot put eval back.
    expect(() => runInContext('"use strict"; globalThis.eval = (s) => s', ctx)).toThrow(/read only/);
    expect(runInContext('let n = 0; setTimeout(() => { n = 5; }); n', ctx)).toBe(5);
    expect(runInContext('(() => 3)() + [1, 2].map((x) => x * 2).length', ctx)).toBe(5);
    expect(runInContext('(function () {}) instanceof Function && (async () => {}) instanceof Function', ctx)).toBe(true);
  });
});
