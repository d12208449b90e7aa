/**
 * Asks before a link builds a run that would be slow or large (over LINK_ASK_SECONDS per CPU
 * iteration or LINK_ASK_BYTES of memory): a link is untrusted, and such a run can take the tab's
 * memory and minutes per iteration without a click.
 */
import { countText } from '../../workers/meta';
import { useAppStore } from '../store';
import './linkCostPrompt.css';

const gb = (bytes: number) => `${(bytes / 1e9).toFixed(bytes >= 1e10 ? 0 : 1)} GB`;
const secs = (s: number) => (s >= 60 ? `${Math.round(s / 60)} min` : `${s >= 10 ? Math.round(s) : s.toFixed(1)} s`);

export function LinkCostPrompt() {
  const gate = useAppStore((s) => s.linkGate);
  const answer = useAppStore((s) => s.answerLinkGate);
  if (!gate) return null;
  const { cost, step } = gate;
  return (
    <div className="notice link-cost" role="alertdialog" aria-labelledby="link-cost-title" data-testid="link-cost-prompt">
      <p className="notice-title" id="link-cost-title">
        This link asks for a large run. Build it?
      </p>
      <p>
        About {secs(cost.cpuSecondsPerIter)} per iteration on the CPU backend and {gb(cost.bytes)} of memory
        {step ? `, for ${countText(step)} iterations` : ''}. Nothing has been built yet; a browser tab may slow down or run out of memory.
      </p>
      <div className="link-cost-actions">
        <button type="button" onClick={() => answer(true)}>
          Build{step ? ' and run' : ''} it
        </button>
        <button type="button" onClick={() => answer(false)} autoFocus>
          Not now
        </button>
      </div>
    </div>
  );
}
