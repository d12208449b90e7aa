/**
 * The unrolled versions of sample and tokenStats: one thread per row as in their thread versions,
 * with the vocabulary a pipeline constant (kernels/pipeline.ts `specialize`), so that the loops
 * over a row unroll and the row's logits are loaded once into registers (sampleUnrolled.wgsl says
 * why). Same bindings, uniform and results, bit for bit, as the thread versions, for vocabularies
 * up to UNROLLED_MAX_VOCAB; every vocabulary compiles a pipeline of its own.
 */
import rowUnrolledWGSL from './rowUnrolled.wgsl?raw';

/** Largest vocabulary of the unrolled kernels: the size of their row array (rowUnrolled.wgsl). */
export const UNROLLED_MAX_VOCAB = 64;

/** An unrolled kernel's WGSL: bindings, entry point, then the row helpers. */
export const unrolledRowSource = (thread: string, main: string): string => `${thread}\n${main}\n${rowUnrolledWGSL}`;

/** The pipeline constant an unrolled kernel is compiled with, after checking the vocabulary fits. */
export function unrolledVocab(label: string, vocab: number): { vocabSize: number } {
  if (!(Number.isInteger(vocab) && vocab >= 1 && vocab <= UNROLLED_MAX_VOCAB)) {
    throw new Error(`${label}: vocabulary ${vocab} is outside the unrolled kernels' 1..${UNROLLED_MAX_VOCAB}; use the thread or subgroup version`);
  }
  return { vocabSize: vocab };
}
