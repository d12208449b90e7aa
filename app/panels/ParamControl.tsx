/** One labelled control for a ParamSpec: number input for number/int, checkbox for bool, select for choice. */
import { useId, useState } from 'react';
import type { ParamSpec, ParamValue } from '../../workers/core/methods/params';
import { useAppStore } from '../store';

interface Props {
  fieldKey: string;
  spec: ParamSpec;
  value: ParamValue | undefined;
  disabled?: boolean;
  /** Where an edit goes instead of the playground's config; returns why it was refused, or null. */
  onCommit?: (key: string, value: ParamValue) => string | null;
  /** The method the parameter belongs to: part of the accessible name ("DAPO clip high"). */
  owner?: string;
}

function formatNumber(v: number): string {
  return Math.abs(v) > 0 && Math.abs(v) < 1e-3 ? v.toExponential() : String(v);
}

export function ParamControl({ fieldKey, spec, value, disabled, onCommit, owner }: Props) {
  const ownerName = owner ? <span className="visually-hidden">{owner} </span> : null;
  const id = useId();
  const setField = useAppStore((s) => s.setField);
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const commit = (v: ParamValue) => {
    if (onCommit) return setError(onCommit(fieldKey, v));
    const ok = setField(fieldKey, v);
    setError(ok ? null : (useAppStore.getState().configError?.message ?? 'invalid value'));
  };

  if (spec.kind === 'bool') {
    return (
      <label className="field field-bool" title={spec.doc}>
        <input
          type="checkbox"
          checked={value === true}
          disabled={disabled}
          onChange={(e) => commit(e.target.checked)}
        />
        <span>
          {ownerName}
          {spec.label}
        </span>
      </label>
    );
  }

  if (spec.kind === 'choice') {
    return (
      <div className="field field-wide" title={spec.doc}>
        <label htmlFor={id}>
          {ownerName}
          {spec.label}
        </label>
        <select id={id} value={String(value)} disabled={disabled} onChange={(e) => commit(e.target.value)}>
          {spec.options.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </div>
    );
  }

  const shown = draft ?? (typeof value === 'number' ? formatNumber(value) : '');
  const step = spec.kind === 'int' ? 1 : (spec.step ?? 'any');
  return (
    <div className="field" title={spec.doc}>
      <label htmlFor={id}>
        {ownerName}
        {spec.label}
      </label>
      <input
        id={id}
        type="number"
        inputMode={spec.kind === 'int' ? 'numeric' : 'decimal'}
        min={spec.min}
        max={spec.max}
        step={step}
        value={shown}
        disabled={disabled}
        aria-invalid={error !== null}
        aria-describedby={error ? `${id}-err` : undefined}
        onChange={(e) => {
          const text = e.target.value;
          setDraft(text);
          const n = Number(text);
          if (text.trim() === '' || !Number.isFinite(n)) setError(`${fieldKey}: expected a number`);
          else commit(n);
        }}
        onBlur={() => {
          setDraft(null);
          setError(null);
        }}
      />
      {error && (
        <span id={`${id}-err`} className="field-error">
          {error}
        </span>
      )}
    </div>
  );
}
