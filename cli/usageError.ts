/** A bad flag, value, path or file given to a CLI: one line naming it, and exit status 2. */
export class UsageError extends Error {}
