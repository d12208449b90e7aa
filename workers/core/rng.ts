// The seeded generators live in kernels/ (the GPU's sampling hash must match the CPU's bit for bit);
// the engine imports them from here.
export { createRng, hashUniform, pcgHash, type Rng } from '../../kernels/rng';
