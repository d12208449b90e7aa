/** A batch written in slices is the same text as one JSON.stringify, and pauses between slices. */
import { describe, expect, it } from 'vitest';
import { batchJsonParts } from '../../workers/formats/batchJsonText';
import { defaultConfig, withField } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createTrainer } from '../../workers/core/trainer';
import { dumpBatch } from '../../workers/formats/batchDump';

describe('batchJsonParts', () => {
  it('joins to exactly JSON.stringify(dump, null, 1), pausing while it writes', async () => {
    const config = withField(withField(withField(defaultConfig(), 'batch', 8), 'group', 8), 'model.hidden', 8);
    const trainer = await createTrainer(config, createCpuBackend);
    await trainer.step();
    const dump = await dumpBatch(trainer);
    trainer.destroy();
    let pauses = 0;
    const parts = await batchJsonParts(dump, 0, async () => void pauses++);
    expect(parts.join('')).toBe(JSON.stringify(dump, null, 1));
    expect(pauses).toBeGreaterThanOrEqual(dump.trajs.length - 1);
    expect((await batchJsonParts({ ...dump, trajs: [] })).join('')).toBe(JSON.stringify({ ...dump, trajs: [] }, null, 1));
  });
});
