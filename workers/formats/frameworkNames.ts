/** The frameworks "Take it to a real run" writes for, by name (the export itself is ./frameworkExport.ts). */
export type Framework = 'verl' | 'trl';
export const FRAMEWORKS: Framework[] = ['verl', 'trl'];
export const FRAMEWORK_NAMES: Record<Framework, string> = { verl: 'verl', trl: 'TRL' };
