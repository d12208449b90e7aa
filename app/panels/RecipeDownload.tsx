/**
 * "Download recipe": the current experiment as a zipped folder that runs it on verl and TRL
 * (workers/formats/recipe/, built and zipped by the trainer worker): the episodes, the task in
 * Python, the run scripts and a README.
 */
import { useState } from 'react';
import { defaultEpisodes, MAX_RECIPE_EPISODES } from '../../workers/meta';
import { downloadBlob } from '../exporters';
import { useAppStore } from '../store';

export function RecipeDownload() {
  const config = useAppStore((s) => s.config);
  const [episodes, setEpisodes] = useState<string>(String(defaultEpisodes(config)));
  const [message, setMessage] = useState<string | null>(null);
  const n = Number(episodes);
  const valid = /^\d+$/.test(episodes) && n >= 1 && n <= MAX_RECIPE_EPISODES;

  const download = async () => {
    try {
      setMessage('Writing the recipe…');
      const recipe = await useAppStore.getState().recipeZip(config, n);
      downloadBlob(recipe.zip, `${recipe.name}.zip`);
      setMessage(`${recipe.name}.zip: ${recipe.files} files, ${n} episodes.`);
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
