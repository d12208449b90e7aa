/** The methods, rendered from the registry: a toggle, the idea, the paper and the parameters of each. */
import { useMemo } from 'react';
import { ConfigError, getField, withMethods, type RunConfig } from '../../workers/config';
import { methodRegistry, type MethodDef, type MethodId } from '../../workers/methods';
import type { ParamSpec } from '../../workers/methods/params';
import { useAppStore } from '../store';
import { ParamControl } from './ParamControl';

const METHODS = Object.values(methodRegistry) as MethodDef[];

/** Why toggling `id` is not allowed, or null if it is. */
function toggleBlocker(config: RunConfig, id: string): string | null {
  const active = config.methods as string[];
  const next = active.includes(id) ? active.filter((m) => m !== id) : [...active, id];
  try {
    withMethods(config, next);
    return null;
  } catch (e) {
    if (e instanceof ConfigError) return e.expected;
    return e instanceof Error ? e.message : String(e);
  }
}

function MethodCard({ method }: { method: MethodDef }) {
  const config = useAppStore((s) => s.config);
  const locked = useAppStore((s) => (s.phase !== 'idle' && s.phase !== 'configuring') || s.imported !== null);
  const setMethods = useAppStore((s) => s.setMethods);
  const active = (config.methods as string[]).includes(method.id);
  const blocker = useMemo(() => toggleBlocker(config, method.id), [config, method.id]);
  const toggleId = `method-${method.id}`;

  const toggle = () => {
    const ids = config.methods as string[];
    setMethods(active ? ids.filter((m) => m !== method.id) : [...ids, method.id]);
  };

  return (
    <article className={`method ${active ? 'active' : ''}`}>
      <header className="method-head">
        <label className="toggle" htmlFor={toggleId} title={blocker ?? undefined}>
          <input id={toggleId} type="checkbox" checked={active} disabled={locked || blocker !== null} onChange={toggle} />
          <span className="method-name">{method.name}</span>
        </label>
        <span className="stage">{method.stage}</span>
        <a href={`https://arxiv.org/abs/${method.paper}`} target="_blank" rel="noreferrer">
          arXiv:{method.paper}
        </a>
      </header>
      <p className="idea">{method.idea}</p>
      {blocker && active && <p className="hint">{blocker}</p>}
      <div className="knobs">
        {Object.entries(method.params).map(([p, spec]) => (
          <ParamControl
            key={p}
            fieldKey={`${method.id}.${p}`}
            spec={spec as ParamSpec}
            value={getField(config, `${method.id}.${p}`)}
            disabled={locked}
          />
        ))}
      </div>
    </article>
  );
}

export function MethodsPanel() {
  return (
    <section className="panel" aria-labelledby="methods-title">
      <h2 id="methods-title">Methods</h2>
      {METHODS.map((m) => (
        <MethodCard key={m.id as MethodId} method={m} />
      ))}
    </section>
  );
}
