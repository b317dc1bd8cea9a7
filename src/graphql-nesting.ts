import { Lexer, Source, TokenKind } from 'graphql';

/**
 * How deep client input nests, measured without recursion, so that any depth is safe to measure
 * (src/graphql-limits.ts refuses what is too deep before a recursive parser or serialiser sees it).
 */

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

/** `{`, `[` and `(` in a text: no document nests deeper than it has opening brackets. */
function openingBrackets(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x7b || code === 0x5b || code === 0x28) count++;
  }
  return count;
}

/**
 * Whether more than `max` brackets are open at once among a document's first `maxTokens` tokens.
 * Only a document with more than `max` opening characters is lexed (brackets in strings and
 * comments are not nesting). A lexical error ends the count: the parser reports it.
 */
export function documentNestsDeeperThan(text: string, max: number, maxTokens: number): boolean {
  if (openingBrackets(text) <= max) return false;
  const lexer = new Lexer(new Source(text));
  let depth = 0;
  try {
    for (let count = 0; count < maxTokens; count++) {
      const { kind } = lexer.advance();
      if (kind === TokenKind.EOF) return false;
      if (OPENING.has(kind) && ++depth > max) return true;
      if (CLOSING.has(kind)) depth--;
    }
  } catch {
    // The parser meets the same error and reports it.
  }
  return false;
}

/** Whether parsed JSON nests arrays and objects more than `max` levels deep (the top one is 1). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: [object, number][] = [];
  if (value !== null && typeof value === 'object') pending.push([value, 1]);
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (depth > max) return true;
    for (const child of Object.values(current))
      if (child !== null && typeof child === 'object') pending.push([child as object, depth + 1]);
  }
  return false;
}
