/** The recipe's Python, shipped as written in py/ (standard library only, but for the framework adapters). */
import makeData from './py/make_data.py?raw';
import toyInit from './py/toyenv/__init__.py?raw';
import toyCommon from './py/toyenv/common.py?raw';
import toyParity from './py/toyenv/parity.py?raw';
import toyRng from './py/toyenv/rng.py?raw';
import toyRoles from './py/toyenv/roles.py?raw';
import toySearch from './py/toyenv/search.py?raw';
import toySequence from './py/toyenv/sequence.py?raw';
import toyText from './py/toyenv/text.py?raw';
import toyTools from './py/toyenv/tools.py?raw';
import trainGrpo from './py/trl_run/train_grpo.py?raw';
import interactionConfig from './py/verl_run/interaction_config.yaml?raw';
import prepareData from './py/verl_run/prepare_data.py?raw';
import reward from './py/verl_run/reward.py?raw';
import toyInteraction from './py/verl_run/toy_interaction.py?raw';

/** Path in the recipe -> text. */
export const PYTHON_FILES: Readonly<Record<string, string>> = {
  'make_data.py': makeData,
  'toyenv/__init__.py': toyInit,
  'toyenv/common.py': toyCommon,
  'toyenv/parity.py': toyParity,
  'toyenv/rng.py': toyRng,
  'toyenv/roles.py': toyRoles,
  'toyenv/search.py': toySearch,
  'toyenv/sequence.py': toySequence,
  'toyenv/text.py': toyText,
  'toyenv/tools.py': toyTools,
  'verl_run/interaction_config.yaml': interactionConfig,
  'verl_run/prepare_data.py': prepareData,
  'verl_run/reward.py': reward,
  'verl_run/toy_interaction.py': toyInteraction,
};

/** trl_run/train_grpo.py with two markers: the header saying what runs, and the generated GRPOConfig. */
export const TRL_TEMPLATE = trainGrpo;
export const TRL_MARKER = '# @GENERATED@';
export const TRL_RUNS_MARKER = '# @RUNS@';
