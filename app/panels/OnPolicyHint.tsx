/**
 * A chart left empty by the settings says so, with the one-click change that fills it: at 1 epoch,
 * 1 minibatch and no staleness every update is on-policy, every IS ratio is exactly 1, and both
 * ratio charts are a single spike at log-ratio 0.
 */
import { useAppStore } from '../store';

export function onPolicyOnly(c: { epochs: number; minibatches: number; staleness: number }): boolean {
  return c.epochs === 1 && c.minibatches === 1 && c.staleness === 0;
}

export function OnPolicyHint() {
  const config = useAppStore((s) => s.config);
  const locked = useAppStore((s) => s.imported !== null);
  const setField = useAppStore((s) => s.setField);
  if (locked || !onPolicyOnly(config)) return null;
  return (
    <p className="hint chart-hint" data-testid="on-policy-hint">
      <span title="With 1 epoch, 1 minibatch and no staleness every update is on-policy, so every IS ratio is exactly 1.">
        Importance-sampling (IS) ratios are all 1 here (on-policy). See off-policy ratios:
      </span>{' '}
      <button type="button" onClick={() => setField('epochs', 2)}>
        2 epochs per batch
      </button>{' '}
      <button type="button" onClick={() => setField('staleness', 2)}>
        rollouts 2 updates stale
      </button>
    </p>
  );
}
