/**
 * A batch dump as the text JSON.stringify(dump, null, 1) gives, written a trajectory at a time with
 * a pause between slices: a batch of 65,536 trajectories is tens of MB, and one blocking stringify
 * would keep the worker from answering the page's heartbeat for that long (it would be declared
 * hung mid-export).
 */
import { nextTask, type BatchDump } from './batchDump';

/** `text` (JSON.stringify with indent 1) moved `depth` levels deeper. */
const deeper = (text: string, depth: number) => text.replace(/\n/g, `\n${' '.repeat(depth)}`);

export async function batchJsonParts(dump: BatchDump, sliceMs = 50, pause: () => Promise<void> = nextTask): Promise<string[]> {
  const fields: string[] = [];
  for (const [key, value] of Object.entries(dump)) {
    if (value === undefined || key === 'trajs') continue;
    fields.push(` ${JSON.stringify(key)}: ${deeper(JSON.stringify(value, null, 1), 1)}`);
  }
  const parts = ['{\n', fields.join(',\n')];
  if (!('trajs' in dump)) return [...parts, '\n}'];
  parts.push(`${fields.length ? ',\n' : ''} "trajs": `);
  if (dump.trajs.length === 0) parts.push('[]');
  else {
    parts.push('[\n');
    let until = performance.now() + sliceMs;
    for (let i = 0; i < dump.trajs.length; i++) {
      parts.push(`${i ? ',\n' : ''}  ${deeper(JSON.stringify(dump.trajs[i], null, 1), 2)}`);
      if (performance.now() > until) {
        await pause();
        until = performance.now() + sliceMs;
      }
    }
    parts.push('\n ]');
  }
  parts.push('\n}');
  return parts;
}
