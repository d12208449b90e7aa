/**
 * The trainer's web-worker entry: the only module with side effects. Its first import forbids code
 * from strings in this worker (workers/entry/noEval.ts); then it exposes the API with Comlink.
 */
import './noEvalHere';
import { expose } from 'comlink';
import { createTrainerApi } from './trainerApi';

expose(createTrainerApi());
