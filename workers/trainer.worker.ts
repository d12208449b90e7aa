/** The trainer's web-worker entry: the only module with side effects. Exposes the API with Comlink. */
import { expose } from 'comlink';
import { createTrainerApi } from './trainerApi';

expose(createTrainerApi());
