/**
 * Share links with this build's lessons and arenas: the link format of workers/formats/shareUrl.ts
 * bound to the lesson catalogue (`lesson=<id>:<step>`) and the arena dimensions (`arena=<spec>`).
 * The page, the CLI and the tests read and write links through these two.
 */
import { arenaSpecToText, parseArenaSpec, type ArenaSpec } from './arena/dimensions';
import { lessonById, LESSON_IDS } from './lessons';
import { decodeLink, encodeLink, type DecodedLinkOf, type LinkContent, type LinkExtrasOf } from '../formats/shareUrl';
import type { RunConfig } from '../core/config';

export type LinkExtras = LinkExtrasOf<ArenaSpec>;
export type DecodedLink = DecodedLinkOf<ArenaSpec>;

const LINK_CONTENT: LinkContent<ArenaSpec> = {
  lessonIds: LESSON_IDS,
  lessonSteps: (id) => lessonById(id)?.steps.length ?? null,
  parseArena: parseArenaSpec,
  arenaText: arenaSpecToText,
};

/**
 * The hash of a config and its extras (encodeLink).
 *
 * @example encodeShareLink(withFieldText(defaultConfig(), 'seed', '7'), { step: 3 }) === '#v=1&seed=7&step=3'
 */
export function encodeShareLink(config: RunConfig, extras: LinkExtras = {}): string {
  return encodeLink(config, extras, LINK_CONTENT);
}

/** Reads a share link (decodeLink): never throws; every problem is named in `errors`. */
export function decodeShareLink(input: unknown): DecodedLink {
  return decodeLink(input, LINK_CONTENT);
}
