// Registers cli/rawLoader.mjs: `tsx --import ./cli/registerRaw.mjs cli/train.ts`.
import { register } from 'node:module';

register('./rawLoader.mjs', import.meta.url);
