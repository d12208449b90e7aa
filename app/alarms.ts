/**
 * Alarms: the training pathologies the playground is about, detected from the metric rows as they
 * arrive and marked on the charts' timeline, one marker per episode. The rules themselves (scale-aware
 * thresholds, episodes that end only on a clear recovery, silence after convergence) live in
 * workers/core/alarmRules.ts, shared with `npm run -s diagnose`, and are re-exported here. Which
 * methods address each alarm is said by the methods' own entries (`remedies` in
 * workers/core/methods/); a method the run already has on is never recommended (`remediesFor`), and
 * the wording follows the run's methods (`alarmExplain`): under per-turn rewards or a critic an
 * all-equal outcome no longer means zero advantages.
 */
import { ALARM_DOCS, ALARM_THRESHOLDS, METHOD_IDS, methodDef, methodRegistry, type AlarmKind } from '../workers/meta';

export {
  ALARM_DOCS,
  ALARM_KINDS,
  ALARM_THRESHOLDS,
  detectAlarms,
  initialAlarmState,
  type Alarm,
  type AlarmDoc,
  type AlarmKind,
  type AlarmState,
} from '../workers/meta';

const T = ALARM_THRESHOLDS;

/** The alarm's one-line explanation, true for the run's methods. */
export function alarmExplain(kind: AlarmKind, methods: readonly string[]): string {
  if (kind === 'collapse') {
    const turn = methods.filter((m) => Object.hasOwn(methodRegistry, m) && methodDef(m).signalOnTies);
    if (turn.length > 0) {
      return `At least ${T.collapse * 100}% of groups have all-equal outcome rewards. Under ${turn.map(nameOf).join(', ')} their advantages need not be 0 (per-turn rewards or a baseline still differ): check the zero-advantage share on the Collapse chart.`;
    }
  }
  if (kind === 'grad') {
    return `The gradient norm jumped above ${T.gradSpike}x its typical size (its recent median, never below ${T.gradFloor * 100}% of the largest it had while learning): one batch or a few tokens dominate the update.`;
  }
  return ALARM_DOCS[kind].explain;
}

function nameOf(id: string): string {
  return Object.hasOwn(methodRegistry, id) ? methodDef(id).name : id;
}

/**
 * The methods whose entries say they address `kind` (in registry order, with the short description
 * they give), less those the run already has on: never recommend what is switched on.
 */
export function remediesFor(kind: AlarmKind, methods: readonly string[] = []): Array<{ id: string; name: string }> {
  return METHOD_IDS.flatMap((id) => {
    const name = methodDef(id).remedies?.[kind];
    return name && !methods.includes(id) ? [{ id, name }] : [];
  });
}
