/** A thrown value as a line for the page: an Error's message (or its name), a string, else its JSON. */
export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return typeof e === 'string' ? e : JSON.stringify(e);
}
