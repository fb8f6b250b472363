import { z } from 'zod';
import { apiErrorFromZod, type InputPart } from './posts/rules/zod-error';

// The NUL rule of every request's input (`parseInput` in api/validation.ts applies it to each part first): here, in
// src/, so that a route of src/ that reads its input itself (the media upload) takes it from one place without
// importing the API layer.

/**
 * The NUL rule alone, for input a route reads without `parseInput` (api/validation.ts): the media upload's JSON body
 * (`src/media/routes.ts`), which words its own schema refusal. Throws 400 `bad_request` naming the first field
 * holding U+0000.
 */
export function refuseNul(value: unknown, where: InputPart): void {
  const nul = nulIssue(value);
  if (nul) throw apiErrorFromZod(new z.ZodError([nul]), where);
}

const nulMessage = 'must not contain the NUL character (\\u0000)';

/**
 * The first string (or member name) holding U+0000, depth first. A loop with parent links, not recursion or copied
 * paths: a JSON body may nest deeper than the stack, and copying the path at each level would be quadratic.
 */
function nulIssue(value: unknown): z.core.$ZodIssue | null {
  interface At { value: unknown; key: PropertyKey | null; parent: At | null }
  const pathOf = (at: At | null): PropertyKey[] => {
    const path: PropertyKey[] = [];
    for (let node = at; node !== null && node.key !== null; node = node.parent) path.push(node.key);
    return path.reverse();
  };
  const stack: At[] = [{ value, key: null, parent: null }];
  while (stack.length > 0) {
    const at = stack.pop()!;
    if (typeof at.value === 'string') {
      if (at.value.includes('\u0000')) return { code: 'custom', path: pathOf(at), message: nulMessage, input: at.value };
    } else if (Array.isArray(at.value)) {
      for (let i = at.value.length - 1; i >= 0; i -= 1) stack.push({ value: at.value[i], key: i, parent: at });
    } else if (at.value !== null && typeof at.value === 'object') {
      const entries = Object.entries(at.value);
      if (entries.some(([name]) => name.includes('\u0000'))) {
        return { code: 'custom', path: pathOf(at), message: `member names ${nulMessage}`, input: at.value };
      }
      for (let i = entries.length - 1; i >= 0; i -= 1) stack.push({ value: entries[i][1], key: entries[i][0], parent: at });
    }
  }
  return null;
}
