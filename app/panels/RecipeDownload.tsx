/**
 * "Download recipe": the current experiment as a zipped folder that runs it on verl and TRL
 * (workers/formats/recipe/): the episodes, the task in Python, the run scripts and a README.
 */
import { useState } from 'react';
import { defaultEpisodes, MAX_RECIPE_EPISODES } from '../../workers/formats/recipe/limits';
import { downloadBlob } from '../exporters';
import { useAppStore } from '../store';

export function RecipeDownload() {
  const config = useAppStore((s) => s.config);
  const [episodes, setEpisodes] = useState<string>(String(defaultEpisodes(config)));
  const [message, setMessage] = useState<string | null>(null);
  const n = Number(episodes);
  const valid = /^\d+$/.test(episodes) && n >= 1 && n <= MAX_RECIPE_EPISODES;

  // The generator (with the Python it ships) loads on the first download, not with the page.
  const download = async () => {
    try {
      const [{ buildRecipe }, { zipFiles }] = await Promise.all([import('../../workers/formats/recipe'), import('../../workers/formats/recipe/zip')]);
      const recipe = buildRecipe(config, { episodes: n });
      const zip = zipFiles(recipe.files.map((f) => ({ path: `${recipe.name}/${f.path}`, text: f.text, mode: f.executable ? 0o755 : 0o644 })));
      downloadBlob(new Blob([zip], { type: 'application/zip' }), `${recipe.name}.zip`);
      setMessage(`${recipe.name}.zip: ${recipe.files.length} files, ${n} episodes.`);
    } catch (e) {
      setMessage(`Recipe failed: ${(e as Error).message}`);
    }
  };

  return (
    <div className="code-head" data-testid="recipe-download">
      <label>
        Episodes{' '}
        <input type="number" min={1} max={MAX_RECIPE_EPISODES} value={episodes} onChange={(e) => setEpisodes(e.target.value)} aria-invalid={!valid} style={{ width: '7em' }} />
      </label>
      <button type="button" className="primary" disabled={!valid} onClick={() => void download()}>
        Download recipe
      </button>
      <span className="copied">{valid ? (message ?? 'the task, its data and environment, verl and TRL scripts (.zip)') : `Episodes: expected an integer from 1 to ${MAX_RECIPE_EPISODES}`}</span>
    </div>
  );
}
