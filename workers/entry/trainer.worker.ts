/**
 * The trainer's web-worker entry: the only module with side effects. Its first import forbids code
 * from strings in this worker (workers/entry/noEval.ts); then it points pretraining at the starts
 * the page ships and exposes the API with Comlink.
 */
import './noEvalHere';
import { expose } from 'comlink';
import { setStartSource } from '../core/pretrain';
import { loadShippedStart } from './loadStarts';
import { createTrainerApi } from './trainerApi';

// Every run this worker builds looks for its pretrained start in the file the page ships first.
setStartSource(loadShippedStart);
expose(createTrainerApi());
