/** Imported first by the worker entry, so the guard is in place before any other module runs. */
import { forbidEval } from './noEval';

forbidEval(globalThis);
