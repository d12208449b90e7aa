/**
 * "Take it to a real run": the current config as verl overrides and as a TRL GRPOConfig snippet
 * (workers/formats/frameworkExport.ts, written by the trainer worker), with copy buttons, caveats,
 * and the settings that have no equivalent there.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import type { FrameworkExport } from '../../workers/formats/frameworkExport';
import { defaultConfig, FRAMEWORK_NAMES, FRAMEWORKS, getField, type Framework } from '../../workers/meta';
import { copyText } from '../exporters';
import { useAppStore } from '../store';
import './FrameworksDialog.css';
import { RecipeDownload } from './RecipeDownload';

export function FrameworksDialog({ onClose }: { onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const config = useAppStore((s) => s.config);
  const [fw, setFw] = useState<Framework>('verl');
  const [copied, setCopied] = useState<string | null>(null);
  const [written, setWritten] = useState<{ key: string; out: FrameworkExport } | { key: string; error: string } | null>(null);
  const key = `${fw}:${JSON.stringify(config)}`;
  useEffect(() => {
    let live = true;
    useAppStore
      .getState()
      .frameworkExport(config, fw)
      .then(
        (out) => live && setWritten({ key, out }),
        (e: unknown) => live && setWritten({ key, error: e instanceof Error ? e.message : String(e) }),
      );
    return () => {
      live = false;
    };
  }, [config, fw, key]);
  const current = written?.key === key ? written : null;
  const out: FrameworkExport =
    current && 'out' in current
      ? current.out
      : { framework: fw, settings: [], matches: [], noEquivalent: [], notes: [], fallback: null, text: current && 'error' in current ? `The export failed: ${current.error}` : 'Writing…' };
  // Task knobs at their defaults are summarized in one row; changed ones are listed.
  const defaults = useMemo(() => defaultConfig(), []);
  const isDefaultTaskKnob = (key: string) => key.startsWith('env.') && getField(config, key) === getField(defaults, key);
  const listed = out.noEquivalent.filter((n) => !isDefaultTaskKnob(n.key));
  const folded = out.noEquivalent.length - listed.length;

  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);

  return (
    <dialog ref={ref} className="dialog" aria-labelledby="realrun-title" onClose={onClose} data-testid="frameworks-dialog">
      <header className="dialog-head">
        <h2 id="realrun-title">Take it to a real run</h2>
        <button type="button" onClick={() => ref.current?.close()} aria-label="Close">
          Close
        </button>
      </header>
      <p className="blurb">
        The current configuration in the option names of real RL frameworks, for the methods they have. The task and the tiny model
        are the playground’s own: bring your dataset, reward function and model — or download the recipe, which brings the task too.
      </p>
      <RecipeDownload />
      <div role="tablist" className="tabs" aria-label="Framework">
        {FRAMEWORKS.map((f) => (
          <button key={f} type="button" role="tab" aria-selected={fw === f} className={fw === f ? 'tab active' : 'tab'} onClick={() => setFw(f)}>
            {f === 'verl' ? 'verl (command-line overrides)' : 'TRL (GRPOConfig)'}
          </button>
        ))}
      </div>
      <div role="tabpanel" aria-label={FRAMEWORK_NAMES[fw]}>
        <div className="code-head">
          <span>{fw === 'verl' ? 'Shell' : 'Python'}</span>
          <button
            type="button"
            onClick={() => void copyText(out.text).then((ok) => setCopied(ok ? `${FRAMEWORK_NAMES[fw]} copied.` : 'Copy failed: select the text and copy it.'))}
          >
            Copy {FRAMEWORK_NAMES[fw]}
          </button>
          {copied && <span className="copied">{copied}</span>}
        </div>
        <pre className="code" data-testid={`export-${fw}`}>
          {out.text}
        </pre>
        {out.notes.length > 0 && (
          <ul className="notes">
            {out.notes.map((n, i) => (
              <li key={i}>{n}</li>
            ))}
          </ul>
        )}
        <h3>No equivalent in {FRAMEWORK_NAMES[fw]}</h3>
        <table className="key-table" data-testid={`no-equivalent-${fw}`}>
          <tbody>
            {listed.map((n, i) => (
              <tr key={`${n.key}-${i}`}>
                <th scope="row">
                  <code>{n.key}</code>
                </th>
                <td className="num">{n.value}</td>
                <td>{n.reason}</td>
              </tr>
            ))}
            {folded > 0 && (
              <tr>
                <th scope="row">
                  <code>env.*</code>
                </th>
                <td className="num">defaults</td>
                <td>
                  {folded} more knob{folded === 1 ? '' : 's'} of the toy tasks, at their defaults: a real run trains on your own prompts and
                  reward function
                </td>
              </tr>
            )}
          </tbody>
        </table>
        {out.matches.length > 0 && (
          <>
            <h3>Already {FRAMEWORK_NAMES[fw]}’s behaviour (nothing to set)</h3>
            <table className="key-table">
              <tbody>
                {out.matches.map((n, i) => (
                  <tr key={`${n.key}-${i}`}>
                    <th scope="row">
                      <code>{n.key}</code>
                    </th>
                    <td className="num">{n.value}</td>
                    <td>{n.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </div>
    </dialog>
  );
}
