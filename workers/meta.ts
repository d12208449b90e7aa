/**
 * The page's one door into the engine for values: descriptions and pure helpers the UI renders
 * from, with no simulator, trainer, backend or kernel behind them. The config's field table and its
 * validators, the method entries (names, papers, parameters, conflicts), the tasks' knobs, the
 * metrics' names and docs, the alarm rules, the lessons and the arena's dimensions as data, the
 * formats the page reads and writes (share links, run files and metric logs, the batch dump it
 * unpacks), and the explainer, which rederives a batch's numbers from its dump in plain TypeScript
 * and so runs in the page. Everything that runs a task or trains runs in the worker
 * (workers/entry/), which the page reaches through app/trainerClient.ts.
 * tests/unit/pageLayers.test.ts checks both sides: app/ imports engine values only from here, and
 * nothing this file imports reaches a simulator, the trainer, a backend or the recipe generator.
 */
export { allFields, CONFIG_FIELDS, ConfigError, defaultConfig, fieldSpec, getField, TASK_IDS, withField, withMethods } from './core/config';
export type { ConfigKey, RunConfig, TaskId } from './core/config';
export { ESTIMATOR_IDS, isMethodId, METHOD_IDS, methodDef, methodRegistry } from './core/methods';
export type { MethodDef, Pathology, Stage } from './core/methods';
export { logRatioBounds, overriddenFields, resolvePlan } from './core/plan';
export { TASK_KNOBS } from './core/envs/knobs';
export { countText } from './core/numberText';
export { ADV_HIST_RANGE, LOGRATIO_HIST_RANGE, METRIC_DOCS, METRIC_NAMES, SCALAR_METRICS } from './core/metrics';
export type { MetricRow, ScalarMetric } from './core/metrics';
export { ALARM_DOCS, ALARM_KINDS, ALARM_THRESHOLDS, detectAlarms, initialAlarmState } from './core/alarmRules';
export type { Alarm, AlarmDoc, AlarmKind, AlarmState } from './core/alarmRules';
export { checkClaimOnSeeds, describeClaim, isDumpStat, lessonById, lessonRun, lessonRunConfig, LESSONS, lessonSeeds, needsDump } from './content/lessons';
export type { Claim, Lesson, LessonRun, LessonStep, RunResult, SeedResults, SeriesStat, Stat } from './content/lessons';
export { statText, whyLessonById, whyOf, whyRunLabel, WHY_RUN_IDS } from './content/why';
export type { WhyRegime, WhyRunId } from './content/why';
export { PRESET_IDS, PRESETS, presetConfig } from './content/presets';
export type { PresetId } from './content/presets';
export { ARENA_DIMENSIONS, ARENA_PRESETS, arenaCells, arenaSpecToText, cellConfig, parseArenaSpec, parseSeedsText } from './content/arena/dimensions';
export type { ArenaCell, ArenaDimId, ArenaSpec } from './content/arena/dimensions';
export { detectCrash } from './content/arena/crash';
export { decodeShareLink, encodeShareLink } from './content/shareLink';
export type { DecodedLink, LinkExtras } from './content/shareLink';
export { explainText, PANEL_IDS } from './formats/shareUrl';
export type { ComparePair, ExplainLink, PanelId } from './formats/shareUrl';
export { createRunFile, MAX_RUN_ROWS, metricsToCsv, parseRunFile, serializeRunFile } from './formats/runFile';
export { readImport } from './formats/importRun';
export type { ImportedLog, ImportRead } from './formats/importRun';
export { unpackBatchInSlices } from './formats/batchDump';
export { FRAMEWORK_NAMES, FRAMEWORKS } from './formats/frameworkNames';
export type { Framework } from './formats/frameworkNames';
export { defaultEpisodes, MAX_RECIPE_EPISODES } from './formats/recipe/limits';
export { compositionOf, explain, explainBatch, refProblem, refTitle, unexplainable } from './explain';
export type { ExplainBatch, Explanation, Input, Ref, Step } from './explain';
export { ITERATION_STAGES, stagePositions } from './explain/stages';
export { stageWords } from './explain/stageDump';
export type { StageName, StagePosition } from './explain/stages';
