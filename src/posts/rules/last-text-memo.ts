/**
 * A text rule's result for the last text it was given. A fan-out checks one text against every account, so the same
 * links and lengths were computed 25 times a request; the rules are pure functions of the text, and their results are
 * read, never changed, by callers.
 */
export function lastTextMemo<T>(compute: (text: string) => T): (text: string) => T {
  let lastText: string | undefined;
  let lastResult: T;
  return (text) => {
    if (text !== lastText) {
      lastResult = compute(text);
      lastText = text;
    }
    return lastResult;
  };
}
