/**
 * Toy multi-step tool use with CM2 checklists (docs/METHODS.md 5.2). A user request `REQ <amount>
 * <currency>` needs tool calls in dependency order, one per turn:
 *   RATE <currency>          → = <rate>       (look up the exchange rate)
 *   CONV <amount> <rate>     → = <money>      (convert the amount at that rate)
 *   BOOK <money>             → = <code>       (book, paying the converted amount)
 *   CONFIRM <code>           → = OK | ERR     (confirm the booking)
 * `toolSteps` keeps the first 1..4 of them. The tools are simulated: per-episode seeded tables, so a
 * result can only be known by calling the tool with the right arguments (which are in the prompt or
 * in the previous turn's result). Distractor tools (`distractors`) accept one argument and return
 * `= ERR`. A call is a tool token then argument tokens (`actionLen` 3; a one-argument call leaves
 * slot 2 unused, mask 0).
 *
 * Each turn t carries the checklist of the reference call t (CM2's seven components; see
 * ChecklistItem): a strict `<TOOL>.tool` item ("is the call at this turn TOOL?", weight 1/2) and
 * one item per argument (deps: the tool item; weights share the other 1/2; strict only with
 * `strictArgs`). A simulated judge labels each item, flipping the true label with probability
 * `judgeNoise`. When the judge fails a strict item the episode ends after that turn (CM2: the next
 * user query comes from the reference trajectory, so the rollout cannot go on). Rewards:
 *   step     stepRewards[n, t, slot] = sum of w_c over the items that became satisfied at that slot
 *   turn     turnRewards[n, t] = R_t = sum_c w_c r_{t,c}
 *   episode  R = (1 / toolSteps) sum_t R_t. We divide by the reference's turn count, so stopping
 *            early never raises R ([I]; CM2 writes L^(i), the rollout's own turn count).
 * `toolReward` = `checklist` trains on R (judged labels); `outcome` on success alone. rewardTrue is
 * R from the true labels (or success). Success: every item of every reference turn truly met.
 */
import { hashUniform, type Rng } from '../rng';
import { checklistLabelStepReward, checklistTrajectoryReward } from './checklist';
import { batchCore, createBatchState, createGrammar, rewardModelOf, type RewardModelOptions } from './common';
import { PAD, type ChecklistItem, type EpisodeBatch, type TaskEnv, type TaskLayout, type TurnChecklist, type TurnResult } from './types';

import type { ToolReward } from './knobs';
export { TOOL_REWARDS, type ToolReward } from './knobs';

export interface ToolsOptions extends Partial<RewardModelOptions> {
  /** Reference calls per request (1..4): RATE, CONV, BOOK, CONFIRM, in that order. */
  toolSteps: number;
  /** Tokens of each argument kind (currencies, amounts, rates, money, codes). */
  toolValues: number;
  /** Distractor tools (0..8): never part of the plan. */
  distractors: number;
  /** Probability that the judge flips an item's label. */
  judgeNoise: number;
  /** Argument items are strict too (a wrong argument ends the episode). */
  strictArgs: boolean;
  toolReward: ToolReward;
}

const PLAN_TOOLS = ['RATE', 'CONV', 'BOOK', 'CONFIRM'] as const;
const DISTRACTOR_NAMES = ['WEATHER', 'NEWS', 'MAPS', 'MAIL', 'CLOCK', 'TAXI', 'HOTEL', 'STOCK'];
/** Argument kinds, in vocabulary order. */
const KINDS = ['c', 'n', 'x', 'm', 'k'] as const; // currency, amount, rate, money, code
const [CUR, AMT, RATEK, MONEY, CODE] = [0, 1, 2, 3, 4];

/**
 * Label of the judge-noise stream forked from a batch's generator. Its seed keys a counter-based
 * uniform per (trajectory, turn, item), so a row's labels do not depend on the other rows.
 */
const JUDGE_STREAM = 0x10d9e;

/** The task's tokens, tools and grammar for `toolSteps` plan tools, `toolValues` tokens per kind and `distractors`. */
function toolsLanguage(S: number, K: number, D: number) {
  const specials = ['·', '<s>', 'REQ', '=', 'OK', 'ERR'];
  const tool0 = specials.length;
  const nTools = S + D;
  const kind0 = tool0 + nTools;
  const tok = (kind: number, i: number) => kind0 + kind * K + i;
  const vocab = [
    ...specials,
    ...PLAN_TOOLS.slice(0, S),
    ...DISTRACTOR_NAMES.slice(0, D),
    ...KINDS.flatMap((k) => Array.from({ length: K }, (_, i) => `${k}${i}`)),
  ];
  const V = vocab.length;
  const layout: TaskLayout = { promptLen: 4, actionLen: 3, obsLen: 2, maxTurns: S };
  /** Argument kinds of each tool (plan tools, then distractors). */
  const sig: number[][] = [[CUR], [AMT, RATEK], [MONEY], [CODE]].slice(0, S);
  const distractorKinds = [CUR, AMT, MONEY, CODE];
  for (let d = 0; d < D; d++) sig.push([distractorKinds[d % 4]!]);

  // Grammar: a turn starts after the prompt's currency or a result token; a tool takes its
  // argument kinds; after an amount comes a rate (CONV's second argument). The slot after a
  // one-argument call is sampled from its argument's row and dropped (mask 0).
  const g = createGrammar(V);
  const turnStart = [CUR, RATEK, MONEY, CODE].flatMap((k) => Array.from({ length: K }, (_, i) => tok(k, i)));
  for (const prev of [...turnStart, OK, ERR]) g.allow(prev, tool0, nTools);
  for (let t = 0; t < nTools; t++) g.allow(tool0 + t, tok(sig[t]![0]!, 0), K);
  for (let i = 0; i < K; i++) g.allow(tok(AMT, i), tok(RATEK, 0), K);
  return {
    S,
    K,
    vocab,
    V,
    layout,
    grammar: g.finish(),
    tool0,
    nTools,
    sig,
    tok,
    kindOf: (t: number) => (t >= kind0 && t < kind0 + 5 * K ? Math.floor((t - kind0) / K) : -1),
    /** Item c of plan turn t's checklist is `<TOOL>.<this>`: the tool item, then one per argument kind. */
    itemSuffix: (t: number, c: number) => (c === 0 ? 'tool' : KINDS[sig[t]![c - 1]!]!),
    /** The value index of an argument token. */
    idx: (t: number) => (t - kind0) % K,
  };
}
type ToolsLanguage = ReturnType<typeof toolsLanguage>;
/** Special tokens, in vocabulary order. */
const [BOS, REQ, EQ, OK, ERR] = [1, 2, 3, 4, 5];

/**
 * The reference checklists of a request (CM2's items, per plan turn) and each checklist's reward
 * table, both built once and shared: a request's lists are the same objects whenever the same values
 * come up again (at most K^2 + 3 K^3 lists: 90 at the default K = 3, 12,544 at K = 16), instead of
 * some sixty strings built anew for every request of every batch. Nothing writes to them.
 */
function createChecklists(lang: ToolsLanguage, strictArgs: boolean) {
  const { S, K, V, vocab } = lang;
  const checklistCache = new Map<number, ChecklistItem[]>();
  /**
   * Each checklist's rewards for every label row (bit c: item c satisfied): the three step rewards as
   * a Float32Array accumulates them item by item (Eq. 2) and the turn reward, their float64 sum in
   * (step, item) order (Eq. 6). A row and turn then reads two entries instead of asking
   * checklistLabelStepReward 18 times. Keyed by the cached lists, so built once per list.
   */
  const rewardTables = new WeakMap<readonly ChecklistItem[], { step: Float32Array; turn: Float64Array }>();
  function rewardTable(items: readonly ChecklistItem[]): { step: Float32Array; turn: Float64Array } {
    let table = rewardTables.get(items);
    if (table) return table;
    const C = items.length;
    table = { step: new Float32Array((1 << C) * 3), turn: new Float64Array(1 << C) };
    const label = new Uint8Array(C);
    for (let row = 0; row < 1 << C; row++) {
      for (let c = 0; c < C; c++) label[c] = (row >> c) & 1;
      let R = 0;
      for (let s = 0; s < 3; s++) {
        for (let c = 0; c < C; c++) {
          const r = items[c]!.weight * checklistLabelStepReward(items, label, s, c);
          table.step[row * 3 + s]! += r;
          R += r;
        }
      }
      table.turn[row] = R;
    }
    rewardTables.set(items, table);
    return table;
  }

  /** The reference checklist of each plan turn of one request. */
  function checklistFor(cur: number, amt: number, correct: number[][]): ChecklistItem[][] {
    const lists: ChecklistItem[][] = [];
    for (let t = 0; t < S; t++) {
      const args = correct[t]!;
      const key = (((t * K + cur) * K + amt) * V + args[0]!) * V + (args[1] ?? 0);
      let items = checklistCache.get(key);
      if (!items) {
        items = turnChecklist(lang, t, cur, amt, args, vocab, strictArgs);
        checklistCache.set(key, items);
      }
      lists.push(items);
    }
    return lists;
  }
  return { checklistFor, rewardTable };
}
type Checklists = ReturnType<typeof createChecklists>;

/** Plan turn t's checklist for a request of amount `amt` in currency `cur`, reference arguments `args`. */
function turnChecklist(lang: ToolsLanguage, t: number, cur: number, amt: number, args: number[], vocab: readonly string[], strictArgs: boolean): ChecklistItem[] {
  const name = PLAN_TOOLS[t]!;
  const items: ChecklistItem[] = [
    {
      id: `${name}.${lang.itemSuffix(t, 0)}`,
      evidence: `reference turn ${t}: ${name}`,
      focus: 'tool call',
      question: `Is the call at turn ${t} ${name}?`,
      pass: `the turn's tool token is ${name}`,
      strict: true,
      deps: [],
      weight: 0.5,
      step: 0,
    },
  ];
  const src = [
    [`prompt: requested currency c${cur}`],
    [`prompt: requested amount n${amt}`, `turn 0 result: the rate of c${cur}`],
    [`turn 1 result: the converted amount`],
    [`turn 2 result: the booking code`],
  ][t]!;
  args.forEach((a, j) => {
    const text = vocab[a]!;
    items.push({
      id: `${name}.${lang.itemSuffix(t, j + 1)}`,
      evidence: src[j]!,
      focus: 'tool argument',
      question: `Is argument ${j + 1} of ${name} ${text} (${src[j]})?`,
      pass: `slot ${j + 1} of the call is ${text}`,
      strict: strictArgs,
      deps: [0],
      weight: 0.5 / args.length,
      step: j + 1,
    });
  });
  return items;
}

export function createToolsEnv(opts: ToolsOptions): TaskEnv {
  const lang = toolsLanguage(opts.toolSteps, opts.toolValues, opts.distractors);
  const rm: RewardModelOptions = rewardModelOf(opts);
  const checklists = createChecklists(lang, opts.strictArgs);
  return {
    id: 'tools',
    vocab: lang.vocab,
    layout: lang.layout,
    grammar: lang.grammar,
    sample: (prompts, group, rng) => sampleTools(lang, checklists, opts, rm, prompts, group, rng),
  };
}

/**
 * Each request's seeded tool tables, its reference calls and checklists, and the rows' prompts.
 * Drawn in this order (rate, conv, code, then the request), as the batch's generator always has.
 */
function drawRequests(lang: ToolsLanguage, checklists: Checklists, prompts: number, group: number, rng: Rng) {
  const { S, K, tok } = lang;
  const P = lang.layout.promptLen;
  // One flat array each: rate [K], conv [K * K], code [K] per request.
  const rate = new Int32Array(prompts * K);
  const conv = new Int32Array(prompts * K * K);
  const code = new Int32Array(prompts * K);
  /** [prompts][turn] the reference call's argument tokens. */
  const correct: number[][][] = [];
  const lists: ChecklistItem[][][] = [];
  const prompt = new Int32Array(prompts * group * P);
  for (let b = 0; b < prompts; b++) {
    for (let i = 0; i < K; i++) rate[b * K + i] = rng.int(K);
    for (let i = 0; i < K * K; i++) conv[b * K * K + i] = rng.int(K);
    for (let i = 0; i < K; i++) code[b * K + i] = rng.int(K);
    const cur = rng.int(K);
    const amt = rng.int(K);
    const x = rate[b * K + cur]!;
    const m = conv[b * K * K + amt * K + x]!;
    const k = code[b * K + m]!;
    correct.push([[tok(CUR, cur)], [tok(AMT, amt), tok(RATEK, x)], [tok(MONEY, m)], [tok(CODE, k)]].slice(0, S));
    lists.push(checklists.checklistFor(cur, amt, correct[b]!));
    const p = Int32Array.of(BOS, REQ, tok(AMT, amt), tok(CUR, cur));
    for (let i = 0; i < group; i++) prompt.set(p, (b * group + i) * P);
  }
  /** Tool t of request b called with arguments (a0, a1) (a1 unused by tools of one argument). */
  function run(b: number, t: number, a0: number, a1: number): number {
    if (t >= S) return ERR; // distractors
    switch (t) {
      case 0:
        return tok(RATEK, rate[b * K + lang.idx(a0)]!);
      case 1:
        return tok(MONEY, conv[b * K * K + lang.idx(a0) * K + lang.idx(a1)]!);
      case 2:
        return tok(CODE, code[b * K + lang.idx(a0)]!);
      case 3:
        return a0 === correct[b]![3]![0] ? OK : ERR;
      default:
        return ERR;
    }
  }
  return { correct, lists, prompt, run };
}

/**
 * The simulated judge of a batch: its labels of every row and turn in one array, CMAX judged then
 * CMAX true ones per (row, turn), and which (row, turn) were judged; the checklists and the turn
 * log's notes are built from them when read. Two label arrays and a record kept per row and turn cost ~10 ms of garbage
 * collection a rollout at 8,192 rollouts (BENCHMARKS.md).
 */
function createJudge(lang: ToolsLanguage, checklists: Checklists, req: ReturnType<typeof drawRequests>, N: number, group: number, judgeNoise: number, judgeSeed: number) {
  const { S } = lang;
  const lists = req.lists;
  const CMAX = 1 + Math.max(...lang.sig.slice(0, S).map((k) => k.length));
  const labels = new Uint8Array(N * S * 2 * CMAX);
  const judged = new Uint8Array(N * S);
  const notes = new Map<number, string>();
  /** Per (row, turn): the judged and the true turn rewards; per (row, turn, slot) the step rewards. */
  const turnRewards = new Float32Array(N * S);
  const turnRewardsTrue = new Float32Array(N * S);
  const stepRewards = new Float32Array(N * S * 3);
  return {
    turnRewards,
    turnRewardsTrue,
    stepRewards,
    /**
     * Row n's call at `turn` (tool t, arguments a0, a1; `ok`: a known tool with the right argument
     * kinds): true labels, then label-flip noise; the turn's rewards from its checklist's table.
     */
    judge(n: number, turn: number, ok: boolean, t: number, a0: number, a1: number): { items: readonly ChecklistItem[]; o: number } {
      const b = Math.floor(n / group);
      const items = lists[b]![turn]!;
      const C = items.length;
      const ref = req.correct[b]![turn]!;
      const o = (n * S + turn) * 2 * CMAX;
      const oT = o + CMAX;
      labels[oT] = ok && t === turn ? 1 : 0;
      for (let c = 1; c < C; c++) labels[oT + c] = labels[oT] && (c === 1 ? a0 : c === 2 ? a1 : -1) === ref[c - 1] ? 1 : 0;
      for (let c = 0; c < C; c++) {
        const flip = judgeNoise > 0 && hashUniform(judgeSeed, n, turn, c) < judgeNoise;
        labels[o + c] = flip ? 1 - labels[oT + c]! : labels[oT + c]!;
      }
      judged[n * S + turn] = 1;
      // Step rewards (Eq. 2) of the judged labels, and the turn sums (Eq. 6) of the judged and the
      // true ones, from the checklist's table (rewardTable: the same sums in the same order).
      const table = checklists.rewardTable(items);
      let row = 0;
      let rowTrue = 0;
      for (let c = 0; c < C; c++) {
        row |= labels[o + c]! << c;
        rowTrue |= labels[oT + c]! << c;
      }
      for (let s = 0; s < 3; s++) stepRewards[(n * S + turn) * 3 + s] = table.step[row * 3 + s]!;
      turnRewards[n * S + turn] = table.turn[row]!;
      turnRewardsTrue[n * S + turn] = table.turn[rowTrue]!;
      return { items, o };
    },
    /** Whether judged item c (at label offset o) is met, and its true label. */
    label: (o: number, c: number) => labels[o + c]!,
    trueLabel: (o: number, c: number) => labels[o + CMAX + c]!,
    /**
     * The turn log's note, `[TOOL: tool✓ c✗(judge flip) ...]`: the items' ids after the tool name
     * (itemSuffix, as the checklists name them), the judged label and where it differs from the
     * true one. A function of the turn and the two label rows, so each distinct note is built once
     * per batch.
     */
    note(items: readonly ChecklistItem[], turn: number, o: number): string {
      const t = o + CMAX;
      let bits = 0;
      for (let c = 0; c < items.length; c++) bits = bits * 4 + labels[o + c]! * 2 + labels[t + c]!;
      const key = bits * S + turn;
      let note = notes.get(key);
      if (note === undefined) {
        const marks = items.map((_, c) => `${lang.itemSuffix(turn, c)}${labels[o + c] ? '✓' : '✗'}${labels[o + c] !== labels[t + c] ? '(judge flip)' : ''}`).join(' ');
        note = `[${PLAN_TOOLS[turn]}: ${marks}]`;
        notes.set(key, note);
      }
      return note;
    },
    /** Each row's checklists, turn by turn, from the labels judged so far. */
    checklists(): TurnChecklist[][] {
      return Array.from({ length: N }, (_, n) => {
        const rows: TurnChecklist[] = [];
        for (let turn = 0; turn < S; turn++) {
          if (!judged[n * S + turn]) continue;
          const o = (n * S + turn) * 2 * CMAX;
          const items = lists[Math.floor(n / group)]![turn]!;
          rows.push({ items, sat: labels.subarray(o, o + items.length), satTrue: labels.subarray(o + CMAX, o + CMAX + items.length) });
        }
        return rows;
      });
    },
  };
}

function sampleTools(lang: ToolsLanguage, checklists: Checklists, opts: ToolsOptions, rm: RewardModelOptions, prompts: number, group: number, rng: Rng): EpisodeBatch {
  const { S, tool0, vocab, layout } = lang;
  const N = prompts * group;
  const P = layout.promptLen;
  const req = drawRequests(lang, checklists, prompts, group, rng);
  const judgeSeed = Math.floor(rng.fork(JUDGE_STREAM).next() * 4294967296);
  const st = createBatchState({ N, rm, rewardRange: [0, 1], rng, maxTurns: layout.maxTurns, actionLen: layout.actionLen });
  const judge = createJudge(lang, checklists, req, N, group, opts.judgeNoise, judgeSeed);
  let checklist: TurnChecklist[][] | null = null;
  const allMet = new Uint8Array(N).fill(1);
  const ended: string[] = new Array<string>(N).fill('');
  const answerTokens = new Int32Array(N * 3);
  // A group's rows share their answer: built once per request, copied to each row.
  for (let b = 0; b < prompts; b++) {
    const answer = Int32Array.from([tool0 + S - 1, ...req.correct[b]![S - 1]!, PAD].slice(0, 3));
    for (let i = 0; i < group; i++) answerTokens.set(answer, 3 * (b * group + i));
  }
  const answerSpan = Uint8Array.from([0, 1, lang.sig[S - 1]!.length > 1 ? 1 : 0]);

  /** Ends row n's episode after `turn` where a strict item failed or the plan is done. */
  function settle(n: number, turn: number, items: readonly ChecklistItem[], o: number): void {
    let strictFail = false;
    for (let c = 0; c < items.length; c++) {
      if (judge.trueLabel(o, c) === 0) allMet[n] = 0;
      if (items[c]!.strict && !judge.label(o, c)) strictFail = true;
    }
    if (!strictFail && turn !== S - 1) return;
    const solved = !strictFail && turn === S - 1 && allMet[n] === 1;
    const R = checklistTrajectoryReward(judge.turnRewards, S, n * S);
    const RTrue = checklistTrajectoryReward(judge.turnRewardsTrue, S, n * S);
    // Checklist: the judged reward trains, the true-label one is kept for evaluation.
    if (opts.toolReward === 'outcome') st.finish(n, solved ? 1 : 0, solved);
    else st.finish(n, RTrue, solved, R);
    ended[n] = strictFail ? ' | strict item failed: end' : solved ? ' | done ✓' : ' | done ✗';
  }

  // Written as plain loops over typed arrays: at 8,192 trajectories this runs once per turn
  // between two GPU round trips, and the host's time is then most of a GPU iteration.
  function step(turn: number, actions: Int32Array): TurnResult {
    checklist = null;
    const obs = new Int32Array(N * 2);
    const actionMask = new Uint8Array(N * 3);
    for (let n = 0; n < N; n++) {
      if (st.done[n]) continue;
      const t = actions[3 * n]! - tool0;
      const ok = t >= 0 && t < lang.nTools && signatureMatches(lang, t, actions, 3 * n + 1);
      const arity = ok ? lang.sig[t]!.length : 2;
      // The call's arguments (-1 past its arity: no token equals it), read in place rather than
      // collected into an array per trajectory and turn.
      const a0 = actions[3 * n + 1]!;
      const a1 = arity > 1 ? actions[3 * n + 2]! : -1;
      actionMask[3 * n] = 1;
      actionMask[3 * n + 1] = 1;
      actionMask[3 * n + 2] = arity > 1 ? 1 : 0;
      const result = ok ? req.run(Math.floor(n / group), t, a0, a1) : ERR;
      obs[2 * n] = EQ;
      obs[2 * n + 1] = result;
      const { items, o } = judge.judge(n, turn, ok, t, a0, a1);
      st.record(n, turn, actions, 3 * n, arity > 1 ? 3 : 2, EQ, result, judge.note(items, turn, o));
      settle(n, turn, items, o);
    }
    return { obs, actionMask };
  }

  /** The reference call of `turn` with the reference arguments (whatever row n did before). */
  function oracle(n: number, turn: number): Int32Array {
    const out = new Int32Array(3);
    if (st.done[n] || turn < 0 || turn >= S) return out;
    out.set([tool0 + turn, ...req.correct[Math.floor(n / group)]![turn]!]);
    return out;
  }

  const prompt = req.prompt;
  const header = (n: number) => Array.from(prompt.subarray(n * P + 1, (n + 1) * P), (t) => vocab[t]).join(' ');
  return {
    ...batchCore(st, { N, group, prompt, step, vocab, header, tail: (n) => ended[n]! }),
    answerTokens,
    answerSpan,
    oracle,
    turnRewards: judge.turnRewards,
    stepRewards: judge.stepRewards,
    get checklist() {
      return (checklist ??= judge.checklists());
    },
  };
}

/** The call's argument tokens have tool t's argument kinds. */
function signatureMatches(lang: ToolsLanguage, t: number, actions: Int32Array, at: number): boolean {
  const kinds = lang.sig[t]!;
  for (let j = 0; j < kinds.length; j++) if (lang.kindOf(actions[at + j]!) !== kinds[j]) return false;
  return true;
}
