import { Lexer, Source, TokenKind } from 'graphql';

/**
 * How deep client input nests, measured without recursion, so that any depth is safe to measure
 * (src/graphql-limits.ts refuses what is too deep before a recursive parser or serialiser sees it).
 */

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

/**
 * The most brackets open at once among a document's first `maxTokens` tokens. A lexical error
 * ends the count: the parser reports it.
 */
export function nestingOfDocument(source: string | Source, maxTokens: number): number {
  const lexer = new Lexer(typeof source === 'string' ? new Source(source) : source);
  let depth = 0;
  let deepest = 0;
  try {
    for (let count = 0; count < maxTokens; count++) {
      const { kind } = lexer.advance();
      if (kind === TokenKind.EOF) break;
      if (OPENING.has(kind)) deepest = Math.max(deepest, ++depth);
      else if (CLOSING.has(kind)) depth--;
    }
  } catch {
    // The parser meets the same error and reports it.
  }
  return deepest;
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
