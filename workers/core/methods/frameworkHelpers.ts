/** Small pieces the methods' framework mappings share. */

/** A method param the export carries through an option the config mapping already sets (the run's effective clip, KL, aggregation). */
export const carried = (param: string, option: string) => ({ param, reason: `exported as ${option} (the value the run uses)` });
